package people

import (
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/keydeck/keydeck/internal/clock"
)

// An account a reload drops is told gone (OnRemoved) only once it has
// stayed out of the users file for GoneGrace: a file cut off for one
// reload, or a replica catching up, does not end what ends with the
// account; one gone longer is told, once.
func TestRemovedAccountsAreToldAfterTheGrace(t *testing.T) {
	hash, _ := bcrypt.GenerateFromPassword([]byte("right-password"), bcrypt.MinCost)
	entry := func(name string) string {
		return "  - name: " + name + "\n    role: viewer\n    password_hash: \"" + string(hash) + "\"\n"
	}
	path := filepath.Join(t.TempDir(), "users.yaml")
	write := func(body string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("users:\n" + entry("ada") + entry("sam"))
	c := clock.NewFake(time.Time{})
	u, err := LoadUsers(path, WithClock(c))
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var told []string
	u.OnRemoved(func(names []string) {
		mu.Lock()
		told = append(told, names...)
		mu.Unlock()
	})
	toldNow := func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(told)
	}
	log := slog.New(slog.DiscardHandler)
	reload := func(body string) {
		t.Helper()
		write(body)
		if err := u.Reload(false, log); err != nil {
			t.Fatal(err)
		}
	}
	// A cut-off file drops sam for one reload.
	reload("users:\n" + entry("ada"))
	c.Advance(GoneGrace / 2)
	reload("users:\n" + entry("ada") + entry("sam"))
	c.Advance(GoneGrace)
	if got := toldNow(); len(got) != 0 {
		t.Fatalf("sam back within the grace: told %q gone", got)
	}
	// Gone, back, gone again: the grace counts from the last removal.
	reload("users:\n" + entry("ada"))
	c.Advance(GoneGrace / 2)
	reload("users:\n" + entry("ada") + entry("sam"))
	reload("users:\n" + entry("ada"))
	c.Advance(GoneGrace/2 + time.Second)
	if got := toldNow(); len(got) != 0 {
		t.Fatalf("sam gone again %v ago: told %q gone", GoneGrace/2+time.Second, got)
	}
	c.Advance(GoneGrace / 2)
	if got := toldNow(); !slices.Equal(got, []string{"sam"}) {
		t.Fatalf("sam gone past the grace: told %q, want [sam]", got)
	}
	c.Advance(2 * GoneGrace)
	if got := toldNow(); len(got) != 1 {
		t.Fatalf("told more than once: %q", got)
	}
}

// OnRemoved's callbacks run without the reload lock held: one may
// register another, or reload the file, without a deadlock.
func TestRemovedCallbacksRunOutsideTheReloadLock(t *testing.T) {
	hash, _ := bcrypt.GenerateFromPassword([]byte("right-password"), bcrypt.MinCost)
	entry := func(name string) string {
		return "  - name: " + name + "\n    role: viewer\n    password_hash: \"" + string(hash) + "\"\n"
	}
	path := filepath.Join(t.TempDir(), "users.yaml")
	if err := os.WriteFile(path, []byte("users:\n"+entry("ada")+entry("sam")), 0o600); err != nil {
		t.Fatal(err)
	}
	c := clock.NewFake(time.Time{})
	u, err := LoadUsers(path, WithClock(c))
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	done := make(chan struct{})
	u.OnRemoved(func([]string) {
		u.OnRemoved(func([]string) {})
		_ = u.Reload(true, log)
		close(done)
	})
	if err := os.WriteFile(path, []byte("users:\n"+entry("ada")), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := u.Reload(false, log); err != nil {
		t.Fatal(err)
	}
	go c.Advance(GoneGrace + time.Second)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("an OnRemoved callback registering another and reloading deadlocked")
	}
}

// A slow OnRemoved callback (revoking a removed account's tokens while
// the audit Redis is down takes its timeout per name) stalls no reload:
// the users file is reloaded, and read, while the callback blocks.
func TestReloadCompletesWhileARemovedCallbackBlocks(t *testing.T) {
	hash, _ := bcrypt.GenerateFromPassword([]byte("right-password"), bcrypt.MinCost)
	entry := func(name string) string {
		return "  - name: " + name + "\n    role: viewer\n    password_hash: \"" + string(hash) + "\"\n"
	}
	path := filepath.Join(t.TempDir(), "users.yaml")
	write := func(body string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("users:\n" + entry("ada") + entry("sam"))
	c := clock.NewFake(time.Time{})
	u, err := LoadUsers(path, WithClock(c))
	if err != nil {
		t.Fatal(err)
	}
	entered, release := make(chan struct{}), make(chan struct{})
	u.OnRemoved(func([]string) {
		close(entered)
		<-release
	})
	defer close(release)
	log := slog.New(slog.DiscardHandler)
	write("users:\n" + entry("ada"))
	if err := u.Reload(false, log); err != nil {
		t.Fatal(err)
	}
	go c.Advance(GoneGrace + time.Second)
	select {
	case <-entered:
	case <-time.After(10 * time.Second):
		t.Fatal("OnRemoved was not called after the grace")
	}
	reloaded := make(chan error, 1)
	go func() {
		write("users:\n" + entry("ada") + entry("vic"))
		reloaded <- u.Reload(true, log)
	}()
	select {
	case err := <-reloaded:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a reload stalled while an OnRemoved callback blocked")
	}
	if _, ok := u.Lookup("vic"); !ok {
		t.Fatal("the reload done while the callback blocked is not in force")
	}
}
