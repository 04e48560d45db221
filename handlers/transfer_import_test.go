package handlers_test

import (
	"bytes"
	"context"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/internal/route"
)

// upload posts a file to a database's import as its form does.
func (b *browser) upload(conn string, db int, csrf, name, file string) (int, http.Header, string) {
	b.t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, _ := mw.CreateFormFile("file", name)
	io.WriteString(fw, file)
	mw.Close()
	req, _ := http.NewRequest(http.MethodPost, b.base+route.ImportURL(conn, db)+"?_csrf="+url.QueryEscape(csrf), &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Origin", b.base)
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	resp, err := b.c.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(out)
}

// An admin uploads a file: a bad line is refused naming it; the preview
// lists new, overwritten (with the current size) and identical keys and
// writes nothing; confirming starts the job, which writes the keys. A
// viewer or support cannot import, and an upload without the token is
// refused.
func TestImportUploadPreviewConfirm(t *testing.T) {
	t.Parallel()
	rs := redistest.Start(t)
	ctx := context.Background()
	c := rs.Client(3)
	c.Set(ctx, "same", "v", 0)
	c.Set(ctx, "old", "a longer current value", 0)
	c.Set(ctx, "expiring", "same", time.Hour)
	f := newAuthFixture(t, rs, nil)
	ada := newBrowserAs(t, f, "ada")
	tok := ada.csrf(route.ImportURL("main", 3))

	code, _, body := ada.upload("main", 3, tok, "bad.jsonl", `{"key":"a","type":"string","value":"x"}`+"\n"+`{"key":"b","type":"string","ttl_ms":0,"value":"x"}`)
	if code != http.StatusBadRequest || !strings.Contains(body, "line 2") {
		t.Fatalf("bad file: %d, no line named:\n%s", code, body)
	}
	file := `{"key":"same","type":"string","value":"v"}
{"key":"old","type":"string","ttl_ms":60000,"value":"new"}
{"key":"fresh:\u00e9","type":"hash","value":[["f","1"]]}
{"key":"keydeck:x","type":"string","value":"never"}
{"key":"expiring","type":"string","ttl_ms":null,"value":"same"}`
	code, _, body = ada.upload("main", 3, tok, "keys.jsonl", file)
	if code != http.StatusOK {
		t.Fatalf("preview: %d\n%s", code, body)
	}
	doc := parseDoc(t, body)
	for class, n := range map[string]string{"new": "1", "overwritten": "2", "identical": "1", "keydeck": "1"} {
		if got := strings.Fields(doc.Find(`[data-testid="count-` + class + `"]`).Text()); len(got) == 0 || got[0] != n {
			t.Errorf("count of %s: %q", class, got)
		}
	}
	if txt := doc.Find(`[data-class="overwritten"] [data-testid="import-class"]`).Last().Text(); !strings.Contains(txt, "TTL differs") {
		t.Errorf("same value, another TTL: %q", txt)
	}
	if cur := doc.Find(`[data-class="overwritten"] [data-testid="import-current"]`).First().Text(); !strings.Contains(cur, "22 B") {
		t.Errorf("overwritten key's current size: %q", cur)
	}
	if c.Get(ctx, "old").Val() != "a longer current value" || c.Exists(ctx, "fresh:é").Val() != 0 {
		t.Fatal("the preview wrote")
	}
	confirm, ok := doc.Find(`[data-testid="import-confirm"]`).Attr("action")
	if !ok {
		t.Fatal("no confirmation form")
	}
	// The job starts only at its own connection's and database's address.
	if code, _, _ := ada.do(http.MethodPost, strings.Replace(confirm, "/db/3/", "/db/4/", 1), url.Values{"_csrf": {tok}}); code != http.StatusNotFound {
		t.Errorf("confirm at another db: %d, want 404", code)
	}
	code, hdr, _ := ada.do(http.MethodPost, confirm, url.Values{"_csrf": {tok}})
	if code != http.StatusSeeOther || !strings.Contains(hdr.Get("Location"), "/bulk/") {
		t.Fatalf("confirm: %d %q", code, hdr.Get("Location"))
	}
	redistest.Eventually(t, 10*time.Second, "the import job", func() bool {
		return c.Get(ctx, "old").Val() == "new" && c.HGet(ctx, "fresh:é", "f").Val() == "1"
	})
	if ttl := c.PTTL(ctx, "old").Val(); ttl <= 59*time.Second || ttl > time.Minute {
		t.Errorf("imported TTL %v", ttl)
	}
	redistest.Eventually(t, 10*time.Second, "the file's TTL (none)", func() bool { return c.PTTL(ctx, "expiring").Val() == -1 })
	if c.Exists(ctx, "keydeck:x").Val() != 0 {
		t.Error("Keydeck's own key was imported")
	}

	for _, who := range []string{"vera", "sam"} {
		b := newBrowserAs(t, f, who)
		if code, _, _ := b.upload("main", 3, b.csrf("/account"), "keys.jsonl", file); code != http.StatusForbidden {
			t.Errorf("%s's upload: %d, want 403", who, code)
		}
	}
	if code, _, _ := ada.upload("main", 3, "forged", "keys.jsonl", file); code != http.StatusForbidden {
		t.Errorf("upload without the token: %d, want 403", code)
	}
}

// On the embedded demo an admin exports a family and imports it into
// another database: the preview classes every key as new, the job
// writes them all, and a second upload finds them identical.
func TestImportOnTheDemo(t *testing.T) {
	t.Parallel()
	f, _ := demoConsole(t)
	waitFor(t, "eisland's pack", func() bool { return f.reg.All()[0].PackChoice().Sampled })
	ada := newBrowserAs(t, f, "ada")
	_, _, file := ada.do(http.MethodGet, route.ExportPatternURL("eisland", 0, "server:*"), nil)
	recs := readExport(t, file)
	if len(recs) == 0 {
		t.Fatal("the demo's db0 exported no server:* key")
	}
	tok := ada.csrf(route.ImportURL("eisland", 13))
	code, _, body := ada.upload("eisland", 13, tok, "db0.jsonl", file)
	doc := parseDoc(t, body)
	if n := doc.Find(`[data-testid="import-row"][data-class="new"]`).Length(); code != http.StatusOK || n != len(recs) {
		t.Fatalf("preview: %d, %d new of %d", code, n, len(recs))
	}
	confirm, _ := doc.Find(`[data-testid="import-confirm"]`).Attr("action")
	if code, _, _ := ada.do(http.MethodPost, confirm, url.Values{"_csrf": {tok}}); code != http.StatusSeeOther {
		t.Fatalf("confirm: %d", code)
	}
	redistest.Eventually(t, 10*time.Second, "the import on the demo", func() bool {
		_, _, body := ada.upload("eisland", 13, tok, "db0.jsonl", file)
		return parseDoc(t, body).Find(`[data-testid="import-row"][data-class="identical"]`).Length() == len(recs)
	})
}
