package handlers_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/keydeck/keydeck/handlers"
	"github.com/keydeck/keydeck/internal/people"
	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/redisview/action"
)

func writeUsersFile(t *testing.T, path, body string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}

func usersEntry(name, role string) string {
	return "  - name: " + name + "\n    role: " + role + "\n    password_hash: \"" + string(testHash) + "\"\n"
}

// watchUsers runs u.Watch for the test's lifetime, logging into logs; the
// function it returns is SIGHUP.
func watchUsers(t *testing.T, u *people.Users, every time.Duration, logs *syncBuf) func() {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	kick := make(chan struct{}, 1)
	done := make(chan struct{})
	go func() { u.Watch(ctx, every, kick, slog.New(slog.NewTextHandler(logs, nil))); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return func() { kick <- struct{}{} }
}

// within polls cond for up to d.
func within(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	redistest.Eventually(t, d, what, cond)
}

// Edits of the users file take effect while Keydeck runs: a demoted admin
// loses the actions, a removed user is signed out, a new one may sign in;
// an invalid file is logged and the last good version stays in force.
func TestUsersFileReloadedWhileServing(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "users.yaml")
	writeUsersFile(t, path, "users:\n"+usersEntry("ada", "admin")+usersEntry("vera", "viewer"))
	users, err := people.LoadUsers(path)
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncBuf{}
	kick := watchUsers(t, users, 50*time.Millisecond, logs)
	f := newAuthFixture(t, nil, func(a *handlers.Auth) { a.Users = users })
	f.redis.Client(3).Set(context.Background(), "server:wallpaper-detail::9:a:1", "{}", time.Hour)
	ada := newBrowser(t, f.srv.URL)
	if code := ada.login("ada", "right-password"); code != http.StatusSeeOther {
		t.Fatalf("login: %d", code)
	}
	preview := func() int {
		tok := ada.csrf("/c/main")
		code, _, _ := ada.do(http.MethodPost, "/actions/preview", url.Values{"_csrf": {tok}, "kind": {"delete-key"}, "conn": {"main"}, "db": {"3"}, "key": {"server:wallpaper-detail::9:a:1"}})
		return code
	}
	if code := preview(); code != http.StatusOK {
		t.Fatalf("admin preview: %d", code)
	}

	writeUsersFile(t, path, "users:\n"+usersEntry("ada", "viewer")+usersEntry("vera", "viewer"))
	within(t, 2*time.Second, "the demoted admin loses the actions", func() bool { return preview() == http.StatusForbidden })
	if !strings.Contains(logs.String(), "ada: admin→viewer") {
		t.Fatalf("the demotion is not logged: %s", logs)
	}

	writeUsersFile(t, path, "users:\n  - name: ada\n    role: emperor\n")
	within(t, 2*time.Second, "the invalid file is logged", func() bool {
		return strings.Contains(logs.String(), "users file invalid; keeping the last good version")
	})
	if code, _, _ := ada.do(http.MethodGet, "/c/main", nil); code != http.StatusOK || preview() != http.StatusForbidden {
		t.Fatalf("after an invalid file ada is not the last good version's viewer: %d", code)
	}

	writeUsersFile(t, path, "users:\n"+usersEntry("vera", "viewer")+usersEntry("newcomer", "support"))
	within(t, 2*time.Second, "the removed user is signed out", func() bool {
		code, _, _ := ada.do(http.MethodGet, "/c/main", nil)
		return code == http.StatusSeeOther
	})
	if code := newBrowser(t, f.srv.URL).login("newcomer", "right-password"); code != http.StatusSeeOther {
		t.Fatalf("a user added to the file cannot sign in: %d", code)
	}
	if code := newBrowser(t, f.srv.URL).login("ada", "right-password"); code != http.StatusUnauthorized {
		t.Fatalf("a removed user signs in: %d", code)
	}

	// SIGHUP reloads at once and says so, even when nothing changed.
	before := strings.Count(logs.String(), "users file reloaded")
	kick()
	within(t, 2*time.Second, "SIGHUP's reload is logged", func() bool { return strings.Count(logs.String(), "users file reloaded") > before })
}

// SIGHUP (kick) reloads even when polling is slow.
func TestUsersFileReloadOnKick(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "users.yaml")
	writeUsersFile(t, path, "users:\n"+usersEntry("ada", "admin"))
	users, err := people.LoadUsers(path)
	if err != nil {
		t.Fatal(err)
	}
	kick := watchUsers(t, users, time.Hour, &syncBuf{})
	writeUsersFile(t, path, "users:\n"+usersEntry("ada", "viewer"))
	kick()
	within(t, 2*time.Second, "the kick reloads", func() bool {
		u, _ := users.Lookup("ada")
		return u.Level == action.Viewer
	})
}

// A users file is refused, naming the file, the entry and the field, when
// an entry's password_hash is there but empty; leaving the field out is how
// a proxy-only user is written.
func TestUsersFileFields(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, body, wantErr string
	}{
		{"hash given", "users:\n" + usersEntry("ada", "admin"), ""},
		{"no hash (proxy only)", "users:\n  - name: ada\n    role: admin\n", ""},
		{"empty hash", "users:\n" + usersEntry("ada", "admin") + "  - name: bob\n    role: viewer\n    password_hash: \"\"\n",
			"users.yaml: user 2 (bob): password_hash is empty"},
		{"misspelt field", "users:\n  - name: ada\n    role: admin\n    pasword_hash: x\n",
			`users.yaml: [4:5] unknown field "pasword_hash"`},
		{"hash key with no value", "users:\n" + usersEntry("ada", "admin") + "  - name: bob\n    role: viewer\n    password_hash:\n",
			"users.yaml: user 2 (bob): password_hash is empty"},
		{"hash key with no value, last line", "users:\n" + usersEntry("ada", "admin") + "  - name: bob\n    role: viewer\n    password_hash:",
			"users.yaml: user 2 (bob): password_hash is empty"},
		{"null hash (~)", "users:\n" + usersEntry("ada", "admin") + "  - name: bob\n    role: viewer\n    password_hash: ~\n",
			"users.yaml: user 2 (bob): password_hash is empty"},
		{"null hash (null)", "users:\n" + usersEntry("ada", "admin") + "  - name: bob\n    password_hash: null\n    role: viewer\n",
			"users.yaml: user 2 (bob): password_hash is empty"},
		{"blank hash", "users:\n  - name: bob\n    role: viewer\n    password_hash: \"  \"\n",
			"users.yaml: user 1 (bob): password_hash is not a bcrypt hash"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "users.yaml")
			writeUsersFile(t, path, tt.body)
			u, err := people.LoadUsers(path)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if _, ok := u.Lookup("ada"); !ok {
					t.Fatal("ada not loaded")
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("err = %v, want one line containing %q", err, tt.wantErr)
			}
		})
	}
}
