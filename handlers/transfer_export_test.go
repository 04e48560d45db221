package handlers_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/internal/demo"
	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/internal/route"
	"github.com/keydeck/keydeck/redisview/transfer"
)

// readExport reads an export's lines, failing on a line that is not one
// of the format.
func readExport(t *testing.T, body string) []transfer.Record {
	t.Helper()
	recs, err := transfer.ReadAll(strings.NewReader(body), transfer.DefaultLimits)
	if err != nil {
		t.Fatalf("export does not read back: %v", err)
	}
	return recs
}

// On the embedded demo a viewer exports a family streamed as JSON Lines
// (chunked, no length known up front), a sensitive family without values,
// one key, and a glob; bad selections are 400s.
func TestExportOnTheDemo(t *testing.T) {
	t.Parallel()
	f, _ := demoConsole(t)
	waitFor(t, "eisland's pack", func() bool { return f.reg.All()[0].PackChoice().Sampled })
	vera := newBrowserAs(t, f, "vera") // a viewer

	resp := vera.raw(http.MethodGet, route.ExportFamilyURL("eisland", 4, "slider-rate-create-ip"))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("export: %d", resp.StatusCode)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/x-ndjson" {
		t.Errorf("Content-Type %q", ct)
	}
	if cd := resp.Header.Get("Content-Disposition"); cd != `attachment; filename="keydeck-eisland-db4-family-slider-rate-create-ip.jsonl"` {
		t.Errorf("Content-Disposition %q", cd)
	}
	if resp.ContentLength != -1 || len(resp.TransferEncoding) == 0 {
		t.Errorf("not streamed: length %d, transfer encoding %v", resp.ContentLength, resp.TransferEncoding)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	recs := readExport(t, string(body))
	if len(recs) == 0 {
		t.Fatal("the demo's slider buckets exported no key")
	}
	for _, r := range recs {
		if !strings.HasPrefix(string(r.Key), "verify:slider:rate:create:ip:") || r.Type != "hash" || !r.HasValue() || len(r.Pairs) == 0 {
			t.Errorf("line %+v is not a slider bucket with its value", r)
		}
	}

	code, _, body2 := vera.do(http.MethodGet, route.ExportFamilyURL("eisland", 5, "totp-secret-enc"), nil)
	recs = readExport(t, body2)
	if code != http.StatusOK || len(recs) == 0 {
		t.Fatalf("sensitive family: %d, %d lines", code, len(recs))
	}
	for _, r := range recs {
		if r.HasValue() || r.Withheld == "" || r.String != "" {
			t.Errorf("sensitive key %q exported with a value or without saying so: %+v", r.Key, r)
		}
	}
	if strings.Contains(body2, `"value"`) {
		t.Error(`a sensitive family's export has a "value"`)
	}

	one := string(recs[0].Key)
	code, _, body3 := vera.do(http.MethodGet, route.ExportKeyURL("eisland", 5, one), nil)
	if got := readExport(t, body3); code != http.StatusOK || len(got) != 1 || string(got[0].Key) != one {
		t.Errorf("one key: %d %q", code, body3)
	}
	code, _, body4 := vera.do(http.MethodGet, route.ExportPatternURL("eisland", 4, "verify:slider:rate:*"), nil)
	if got := readExport(t, body4); code != http.StatusOK || len(got) < len(recs) {
		t.Errorf("glob: %d, %d lines", code, len(got))
	}

	for _, bad := range []string{
		route.ExportPath("eisland", 4),
		route.ExportPath("eisland", 4) + "?family=slider-rate-create-ip&pattern=*",
		route.ExportFamilyURL("eisland", 4, "no-such-family"),
		route.ExportPatternURL("eisland", 4, "*a*b*c*d*e*f*g*h*i*"),
	} {
		if code, _, _ := vera.do(http.MethodGet, bad, nil); code != http.StatusBadRequest {
			t.Errorf("%s: %d, want 400", bad, code)
		}
	}
}

// A sensitive value never leaves in an export: the marker planted in
// each sensitive key is in no line, whose line says it was withheld;
// Keydeck's own keys are not exported at all.
func TestExportWithholdsSensitive(t *testing.T) {
	t.Parallel()
	rs := redistest.Start(t)
	ctx := context.Background()
	if err := demo.SeedEIsland(ctx, func(db int) redis.Cmdable { return rs.Client(db) }, time.Now()); err != nil {
		t.Fatal(err)
	}
	const marker = "MARKER-5f1d-never-exported"
	rs.Client(0).Set(ctx, "verify:code:LOGIN:someone@example.com", marker, 0) // db 0: no family there
	rs.Client(2).Set(ctx, "verify:code:LOGIN:someone@example.com", marker, 0)
	rs.Client(5).Set(ctx, "totp:security:secret:plain:someone", marker, 0)
	rs.Client(5).Set(ctx, "keydeck:own", "x", 0)
	f := newAuthFixture(t, rs, nil)
	vera := newBrowserAs(t, f, "vera")
	for _, u := range []string{
		route.ExportPatternURL("main", 2, "*"), route.ExportPatternURL("main", 5, "*"),
		route.ExportFamilyURL("main", 2, "verify-code"), route.ExportKeyURL("main", 5, "totp:security:secret:plain:someone"),
	} {
		code, _, body := vera.do(http.MethodGet, u, nil)
		if code != http.StatusOK || strings.Contains(body, marker) || strings.Contains(body, "keydeck:own") {
			t.Fatalf("%s: %d, the marker or Keydeck's key exported:\n%s", u, code, body)
		}
		withheld := 0
		for _, r := range readExport(t, body) {
			if r.Withheld != "" {
				withheld++
			}
		}
		if withheld == 0 {
			t.Errorf("%s: no line says a value was withheld", u)
		}
	}
	// Where no family is sensitive, the same value is exported.
	code, _, body := vera.do(http.MethodGet, route.ExportKeyURL("main", 0, "verify:code:LOGIN:someone@example.com"), nil)
	if code != http.StatusOK || !strings.Contains(body, marker) {
		t.Errorf("db0's key (no family): %d %s", code, body)
	}
}

// raw is a GET as the browser sends it, its body left to the caller.
func (b *browser) raw(method, path string) *http.Response {
	b.t.Helper()
	req, _ := http.NewRequest(method, b.base+path, nil)
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	resp, err := b.c.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	return resp
}
