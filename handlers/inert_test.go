package handlers_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// Key names and values are attacker-controlled: pages and websocket
// fragments show them as text, never as markup. Sensitive values never
// appear anywhere: pages, fragments, previews or the audit log.
func TestHostileKeysInertAndSecretsNeverShown(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t, nil, nil)
	ctx := context.Background()
	const (
		hostile   = `q:reserved:<script>alert(1)</script>"'&<img src=x onerror=alert(2)>`
		totp      = "JBSWY3DPEHPK3PXPSECRETSEED"
		codeHash  = "9f86d081884c7d659a2feb15d0d3c4a7e3c6b2e1b0c8d9e0f1a2b3c4d5e6f7a8"
		totpKey   = "totp:security:secret:plain:alice"
		codeKey   = "verify:code:LOGIN:alice@example.com"
		hostileDB = 6
	)
	f.redis.Client(5).Set(ctx, totpKey, totp, time.Minute)
	f.redis.Client(2).Set(ctx, codeKey, codeHash, 5*time.Minute)
	f.redis.Client(hostileDB).Set(ctx, hostile, `<script>alert("value")</script>`, 0)
	f.redis.Client(hostileDB).Set(ctx, "auth:replay:"+hostile, "1", time.Minute)

	br := newBrowser(t, f.srv.URL)
	br.login("ada", "right-password")
	var outputs []string
	for _, p := range []string{"/c/main", "/c/main/db/6", "/c/main/db/5", "/c/main/db/2",
		"/c/main/db/6/key?k=" + url.QueryEscape(hostile), "/c/main/db/5/key?k=" + url.QueryEscape(totpKey), "/c/main/db/2/key?k=" + url.QueryEscape(codeKey)} {
		code, _, body := br.do(http.MethodGet, p, nil)
		if code != http.StatusOK {
			t.Fatalf("%s: %d", p, code)
		}
		outputs = append(outputs, body)
		// What a script asking for the page's view model gets.
		code, _, body = br.do(http.MethodGet, p, nil, "Accept", "application/json")
		if code != http.StatusOK {
			t.Fatalf("%s as JSON: %d", p, code)
		}
		outputs = append(outputs, body)
	}
	// Wait until the sweeps have seen the keys, then read the live fragments.
	pu, _ := url.Parse(f.srv.URL)
	hdr := http.Header{"Origin": {f.srv.URL}}
	for _, ck := range br.c.Jar.Cookies(pu) {
		hdr.Add("Cookie", ck.Name+"="+ck.Value)
	}
	for _, topic := range []string{"dbstats:main:6", "dbstats:main:5", "dbstats:main:2", "overview:main"} {
		ws, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(f.srv.URL, "http")+"/ws?topic="+url.QueryEscape(topic), hdr)
		if err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(5 * time.Second)
		for time.Now().Before(deadline) {
			_ = ws.SetReadDeadline(deadline)
			_, msg, err := ws.ReadMessage()
			if err != nil {
				break
			}
			outputs = append(outputs, string(msg))
			if topic != "dbstats:main:6" || strings.Contains(string(msg), "alert(1)") {
				break
			}
		}
		ws.Close()
	}
	// Delete both sensitive keys through the confirmation step, then read the audit log.
	for _, k := range []struct {
		db  string
		key string
	}{{"5", totpKey}, {"2", codeKey}} {
		tok := br.csrf("/")
		code, _, body := br.do(http.MethodPost, "/actions/preview", url.Values{"_csrf": {tok}, "kind": {"delete-key"}, "conn": {"main"}, "db": {k.db}, "key": {k.key}})
		if code != http.StatusOK {
			t.Fatalf("preview delete %s: %d %.200s", k.key, code, body)
		}
		outputs = append(outputs, body)
		m := regexpToken.FindStringSubmatch(body)
		if m == nil {
			t.Fatal("no confirmation token")
		}
		code, _, body = br.follow(http.MethodPost, "/actions/execute", url.Values{"_csrf": {tok}, "token": {m[1]}})
		if code != http.StatusOK {
			t.Fatalf("execute delete %s: %d %.300s", k.key, code, body)
		}
		outputs = append(outputs, body)
	}
	_, _, audit := br.do(http.MethodGet, "/audit", nil)
	_, _, auditJSON := br.do(http.MethodGet, "/audit", nil, "Accept", "application/json")
	outputs = append(outputs, audit, auditJSON)
	if !strings.Contains(audit, totpKey) {
		t.Fatal("the audit page does not list the deletion")
	}
	raw, _, err := f.run.ReadAudit(ctx, auditFilterAll())
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range raw {
		outputs = append(outputs, recordText(r))
	}

	sawHostile := false
	for i, o := range outputs {
		for _, secret := range []string{totp, codeHash} {
			if strings.Contains(o, secret) {
				t.Fatalf("output %d shows a sensitive value", i)
			}
		}
		if strings.Contains(o, "<script>alert") || strings.Contains(o, "<img src=x") {
			t.Fatalf("output %d contains live markup from a key: %.300s", i, o[max(0, strings.Index(o, "<script>alert")-100):])
		}
		sawHostile = sawHostile || strings.Contains(o, "&lt;script&gt;alert(1)&lt;/script&gt;")
	}
	if !sawHostile {
		t.Fatal("the hostile key name was never shown (escaped) at all")
	}
}
