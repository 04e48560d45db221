package handlers_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/keydeck/keydeck/handlers"
	"github.com/keydeck/keydeck/internal/people"
	"github.com/keydeck/keydeck/internal/server"
	"github.com/keydeck/keydeck/redisview/action"
)

// supportCredentials is how docs/support.sh authenticates to f: a
// support-level API token of sam (a user of f's users file), minted in the
// audit Redis as /account/tokens does, sent as KEYDECK_TOKEN. The script
// runs with the PATH as it is: the plain curl and jq.
func supportCredentials(t *testing.T, f *console) string {
	t.Helper()
	sam, _ := testUsers().Lookup("sam") // a token is bound to its owner's account
	tok, _, err := people.NewTokenStore(f.redis.Client(15)).Create(context.Background(), sam, "support-script", action.Support, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// support runs docs/support.sh task name against f; it returns the
// script's exit code and output.
func support(t *testing.T, f *console, token, task, name string) (int, string) {
	t.Helper()
	cmd := exec.Command("sh", filepath.Join("..", "docs", "support.sh"), task, name)
	cmd.Env = append(os.Environ(), "KEYDECK_URL="+f.srv.URL, "KEYDECK_TOKEN="+token, "KEYDECK_CONN=main")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0, out.String()
	case errors.As(err, &exit):
		return exit.ExitCode(), out.String()
	}
	t.Fatalf("support.sh: %v", err)
	return 0, ""
}

// docs/support.sh does the support tasks through the API on the seeds'
// data: is X banned, unban X, unlock X's login, reset X's CAPTCHA bucket.
func TestSupportScript(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("jq"); err != nil {
		t.Fatal("docs/support.sh needs jq (Debian package jq)")
	}
	f := newSeededConsoleWith(t, server.Config{Auth: handlers.Auth{Users: testUsers(), Secret: []byte(testSecret)}})
	ctx := context.Background()
	token := supportCredentials(t, f)
	const fox = "🦊fox"
	if code, out := support(t, f, token, "banned", fox); code != 0 || !strings.Contains(out, "banned") {
		t.Fatalf("banned %s: exit %d\n%s", fox, code, out)
	}
	if code, out := support(t, f, token, "banned", "alice.w"); code != 1 || !strings.Contains(out, "not banned") {
		t.Errorf("banned alice.w: exit %d\n%s", code, out)
	}
	if code, out := support(t, f, token, "unban", fox); code != 0 || !strings.Contains(out, "done:") {
		t.Fatalf("unban: exit %d\n%s", code, out)
	}
	if code, out := support(t, f, token, "banned", fox); code != 1 {
		t.Errorf("after the unban: exit %d\n%s", code, out)
	}

	lock := "auth:limit:login:lock:bob_chen"
	if f.redis.Client(6).Exists(ctx, lock).Val() != 1 {
		t.Fatal("the seed has no login lock for bob_chen")
	}
	if code, out := support(t, f, token, "unlock", "bob_chen"); code != 0 || !strings.Contains(out, "done:") {
		t.Fatalf("unlock: exit %d\n%s", code, out)
	}
	if n := f.redis.Client(6).Exists(ctx, lock, "auth:limit:login:failures:bob_chen").Val(); n != 0 {
		t.Errorf("after the unlock %d of bob_chen's login keys remain", n)
	}

	// A user with a CAPTCHA bucket: the seed names the account in base64.
	keys, _, err := f.redis.Client(4).Scan(ctx, 0, "verify:slider:rate:create:account:*", 10000).Result()
	if err != nil || len(keys) == 0 {
		t.Fatalf("no CAPTCHA bucket in the seed: %v", err)
	}
	part := strings.TrimPrefix(keys[0], "verify:slider:rate:create:account:")
	account, err := base64.StdEncoding.DecodeString(part)
	if err != nil {
		account, err = base64.RawURLEncoding.DecodeString(part)
	}
	if err != nil {
		t.Fatalf("bucket %s: %v", keys[0], err)
	}
	if code, out := support(t, f, token, "reset-captcha", string(account)); code != 0 || !strings.Contains(out, "done:") {
		t.Fatalf("reset-captcha %q: exit %d\n%s", account, code, out)
	}
	if f.redis.Client(4).Exists(ctx, keys[0]).Val() != 0 {
		t.Errorf("after the reset %s remains", keys[0])
	}
	if code, out := support(t, f, token, "reset-captcha", "nobody-at-all"); code != 1 {
		t.Errorf("reset-captcha of a user without a bucket: exit %d\n%s", code, out)
	}
}

// A refused request ends docs/support.sh with exit 3, whatever step it
// was (an answer piped into jq once made it "nothing to do", exit 1, and a
// refused execute exit 0); a name with backslashes is sent as it is (dash's
// echo once turned "bob\\" into a JSON error, exit 4).
func TestSupportScriptRefusalsAndBackslashes(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("jq"); err != nil {
		t.Fatal("docs/support.sh needs jq (Debian package jq)")
	}
	f := newSeededConsoleWith(t, server.Config{Auth: handlers.Auth{Users: testUsers(), Secret: []byte(testSecret)}})
	token := supportCredentials(t, f)
	bad := "kdt_" + strings.Repeat("A", 43)
	for _, task := range []string{"unlock", "unban", "reset-captcha", "banned"} {
		if code, out := support(t, f, bad, task, "bob_chen"); code != 3 {
			t.Errorf("%s with a refused token: exit %d, want 3\n%s", task, code, out)
		}
	}
	for _, name := range []string{`bob\`, `a\nb\c`, `"quoted"`} {
		if code, out := support(t, f, token, "banned", name); code != 1 || !strings.Contains(out, "not banned") {
			t.Errorf("banned %q: exit %d, want 1 (not banned)\n%s", name, code, out)
		}
	}
}
