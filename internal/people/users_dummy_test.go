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
	h12, _ := bcrypt.GenerateFromPassword([]byte("right-password"), 12)
	path := filepath.Join(t.TempDir(), "users.yaml")
	body := "users:\n  - name: ada\n    role: admin\n    password_hash: \"" + string(h12) + "\"\n  - name: pat\n    role: viewer\n    email: pat@example.com\n"
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	u, err := LoadUsers(path)
	if err != nil {
		t.Fatal(err)
	}
	if c, err := bcrypt.Cost(u.dummy()); err != nil || c != 12 {
		t.Fatalf("dummy hash cost %d (%v), want 12 like the users file's hashes", c, err)
	}
	// Without any hash (proxy-only accounts), the cost of hash-password's output.
	if c, _ := bcrypt.Cost(NewUsers(User{Name: "pat"}).dummy()); c != PasswordCost {
		t.Fatalf("dummy hash cost without hashes %d, want %d", c, PasswordCost)
	}
}
