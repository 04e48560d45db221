package people

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/crypto/bcrypt"
)

// A sign-in for a missing account costs what a wrong password for an
// existing one costs: the dummy comparison uses the users' bcrypt cost.
func TestDummyHashCostMatchesUsers(t *testing.T) {
	t.Parallel()
	// The file's cost is not PasswordCost, so a dummy made at PasswordCost
	// whatever the file says fails; and it is low, so the test does not
	// pay for a second cost-12 hash (seconds under -race).
	const fileCost = bcrypt.MinCost + 1
	hash, _ := bcrypt.GenerateFromPassword([]byte("right-password"), fileCost)
	path := filepath.Join(t.TempDir(), "users.yaml")
	body := "users:\n  - name: ada\n    role: admin\n    password_hash: \"" + string(hash) + "\"\n  - name: pat\n    role: viewer\n    email: pat@example.com\n"
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	u, err := LoadUsers(path)
	if err != nil {
		t.Fatal(err)
	}
	if c, err := bcrypt.Cost(u.dummy()); err != nil || c != fileCost {
		t.Fatalf("dummy hash cost %d (%v), want %d like the users file's hashes", c, err, fileCost)
	}
	// Without any hash (proxy-only accounts), the cost of hash-password's output.
	if c, _ := bcrypt.Cost(NewUsers(User{Name: "pat"}).dummy()); c != PasswordCost {
		t.Fatalf("dummy hash cost without hashes %d, want %d", c, PasswordCost)
	}
}
