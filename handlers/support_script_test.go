package handlers_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// supportCredentials is how docs/support.sh authenticates to f: the
// KEYDECK_TOKEN it sends, and a directory to put first on its PATH ("" for
// none). The console is in open mode, where every request is admin and a
// token is not checked; a write there is a session-cookie write, so the
// directory holds a curl that adds the browser's CSRF cookie, its token
// and the Origin. With API tokens, this returns a support token of a
// signed-in console and no directory: the script itself is unchanged.
func supportCredentials(t *testing.T, f *console) (token, path string) {
	t.Helper()
	c := newAPIClient(t, f)
	u, _ := url.Parse(f.srv.URL)
	var cookie string
	for _, ck := range c.b.c.Jar.Cookies(u) {
		if ck.Name == "kd_csrf" {
			cookie = ck.Value
		}
	}
	real, err := exec.LookPath("curl")
	if err != nil {
		t.Fatal("docs/support.sh needs curl")
	}
	dir := t.TempDir()
	shim := "#!/bin/sh\nexec " + real + " -H 'Origin: " + f.srv.URL + "' -H 'X-CSRF-Token: " + c.csrf + "' -b 'kd_csrf=" + cookie + "' \"$@\"\n"
	if err := os.WriteFile(filepath.Join(dir, "curl"), []byte(shim), 0o755); err != nil {
		t.Fatal(err)
	}
	return "kdt_open-mode-not-checked", dir
}

// support runs docs/support.sh task name against f; it returns the
// script's exit code and output.
func support(t *testing.T, f *console, task, name string) (int, string) {
	t.Helper()
	token, path := supportCredentials(t, f)
	cmd := exec.Command("sh", filepath.Join("..", "docs", "support.sh"), task, name)
	cmd.Env = append(os.Environ(), "KEYDECK_URL="+f.srv.URL, "KEYDECK_TOKEN="+token, "KEYDECK_CONN=main")
	if path != "" {
		cmd.Env = append(cmd.Env, "PATH="+path+string(os.PathListSeparator)+os.Getenv("PATH"))
	}
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
	if _, err := exec.LookPath("jq"); err != nil {
		t.Fatal("docs/support.sh needs jq (Debian package jq)")
	}
	f := newSeededConsole(t)
	ctx := context.Background()
	const fox = "🦊fox"
	if code, out := support(t, f, "banned", fox); code != 0 || !strings.Contains(out, "banned") {
		t.Fatalf("banned %s: exit %d\n%s", fox, code, out)
	}
	if code, out := support(t, f, "banned", "alice.w"); code != 1 || !strings.Contains(out, "not banned") {
		t.Errorf("banned alice.w: exit %d\n%s", code, out)
	}
	if code, out := support(t, f, "unban", fox); code != 0 || !strings.Contains(out, "done:") {
		t.Fatalf("unban: exit %d\n%s", code, out)
	}
	if code, out := support(t, f, "banned", fox); code != 1 {
		t.Errorf("after the unban: exit %d\n%s", code, out)
	}

	lock := "auth:limit:login:lock:bob_chen"
	if f.redis.Client(6).Exists(ctx, lock).Val() != 1 {
		t.Fatal("the seed has no login lock for bob_chen")
	}
	if code, out := support(t, f, "unlock", "bob_chen"); code != 0 || !strings.Contains(out, "done:") {
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
	if code, out := support(t, f, "reset-captcha", string(account)); code != 0 || !strings.Contains(out, "done:") {
		t.Fatalf("reset-captcha %q: exit %d\n%s", account, code, out)
	}
	if f.redis.Client(4).Exists(ctx, keys[0]).Val() != 0 {
		t.Errorf("after the reset %s remains", keys[0])
	}
	if code, out := support(t, f, "reset-captcha", "nobody-at-all"); code != 1 {
		t.Errorf("reset-captcha of a user without a bucket: exit %d\n%s", code, out)
	}
}
