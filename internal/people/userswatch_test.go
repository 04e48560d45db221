package people

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/keydeck/keydeck/internal/clock"
	"github.com/keydeck/keydeck/internal/redistest"
)

// Watch polls the users file on the users' clock: an edit is read once
// `every` has passed on it, not before. A fake clock drives the poll.
func TestUsersWatchPollsOnTheUsersClock(t *testing.T) {
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
	write("users:\n" + entry("ada"))
	c := clock.NewFake(time.Time{})
	u, err := LoadUsers(path, WithClock(c))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { u.Watch(ctx, 5*time.Second, nil, slog.New(slog.DiscardHandler)); close(done) }()
	defer func() { cancel(); <-done }()
	wctx, wcancel := context.WithTimeout(ctx, 10*time.Second)
	defer wcancel()
	if err := c.BlockUntil(wctx, 1); err != nil {
		t.Fatalf("the watch does not poll on the users' clock: %v", err)
	}
	if got := c.Deadlines(); len(got) != 1 || got[0] != 5*time.Second {
		t.Fatalf("the watch waits %v on the users' clock, want [5s]", got)
	}
	write("users:\n" + entry("ada") + entry("sam"))
	c.Advance(4 * time.Second)
	if _, ok := u.Lookup("sam"); ok {
		t.Fatal("the file was read again before its poll fell due")
	}
	c.Advance(time.Second)
	redistest.Eventually(t, 10*time.Second, "the edit read at the poll", func() bool {
		_, ok := u.Lookup("sam")
		return ok
	})
}
