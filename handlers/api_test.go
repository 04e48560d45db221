package handlers_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/internal/demo"
	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/internal/server"
)

var updateAPI = flag.Bool("update", false, "rewrite testdata/api/openapi.json from the served document")

// apiClient calls the API as a script would: JSON in, JSON out. A write
// carries what the console asks of a session-cookie write (Origin and the
// CSRF token, csrf) until a bearer token is set.
type apiClient struct {
	t       *testing.T
	b       *browser
	csrf    string
	bearer  string
	lastHdr http.Header
}

// hxCSRF finds the CSRF token every page hands htmx (hx-headers).
var hxCSRF = regexp.MustCompile(`X-CSRF-Token&#34;:&#34;([^&]+)&#34;`)

// newAPIClient is a client of f's console with the CSRF token of its
// browser session (open mode: everyone is admin).
func newAPIClient(t *testing.T, f *console) *apiClient {
	b := newBrowser(t, f.srv.URL)
	_, _, page := b.do(http.MethodGet, "/", nil)
	m := hxCSRF.FindStringSubmatch(page)
	if m == nil {
		t.Fatal("no CSRF token on /")
	}
	return &apiClient{t: t, b: b, csrf: m[1]}
}

// do sends method path with body (JSON, nil none) and returns the status
// and the body.
func (c *apiClient) do(method, path string, body any) (int, []byte) {
	c.t.Helper()
	var r io.Reader
	if body != nil {
		j, err := json.Marshal(body)
		if err != nil {
			c.t.Fatal(err)
		}
		r = bytes.NewReader(j)
	}
	req, _ := http.NewRequest(method, c.b.base+path, r)
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Origin", c.b.base)
		req.Header.Set("X-CSRF-Token", c.csrf)
	}
	if c.bearer != "" {
		req.Header.Set("Authorization", "Bearer "+c.bearer)
	}
	res, err := c.b.c.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer res.Body.Close()
	out, _ := io.ReadAll(res.Body)
	c.lastHdr = res.Header
	return res.StatusCode, out
}

// getJSON GETs path, wants want, and decodes the body into v.
func (c *apiClient) getJSON(path string, want int, v any) []byte {
	c.t.Helper()
	code, body := c.do(http.MethodGet, path, nil)
	if code != want {
		c.t.Fatalf("GET %s: %d, want %d: %s", path, code, want, body)
	}
	if v != nil {
		if err := json.Unmarshal(body, v); err != nil {
			c.t.Fatalf("GET %s: %v: %s", path, err, body)
		}
	}
	return body
}

// newSeededConsole is an open console on a server holding the eIsland
// seed (connection "main", pack eisland).
func newSeededConsole(t *testing.T) *console {
	t.Helper()
	return newSeededConsoleWith(t, server.Config{})
}

// newSeededConsoleWith is newSeededConsole with cfg (sign-in, say).
func newSeededConsoleWith(t *testing.T, cfg server.Config) *console {
	t.Helper()
	rs := redistest.Start(t)
	if err := demo.SeedEIsland(context.Background(), func(db int) redis.Cmdable { return rs.Client(db) }, time.Now()); err != nil {
		t.Fatal(err)
	}
	f := startConsole(t, rs, cfg, nil).up(t)
	waitFor(t, "the pack is chosen", func() bool { return f.reg.All()[0].Pack() != nil })
	return f
}

// The OpenAPI document is the contract: a change to it shows in review
// as a change of testdata/api/openapi.json (go test -run
// TestAPIOpenAPIGolden ./handlers/ -update rewrites it).
func TestAPIOpenAPIGolden(t *testing.T) {
	t.Parallel()
	f := newFixture(t, false)
	c := newAPIClient(t, f)
	code, body := c.do(http.MethodGet, "/api/v1/openapi.json", nil)
	if code != http.StatusOK {
		t.Fatalf("openapi.json: %d %s", code, body)
	}
	var doc map[string]any
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatal(err)
	}
	if doc["openapi"] != "3.1.0" {
		t.Errorf("openapi = %v, want 3.1.0", doc["openapi"])
	}
	pretty, _ := json.MarshalIndent(doc, "", "  ")
	pretty = append(pretty, '\n')
	golden := filepath.Join("testdata", "api", "openapi.json")
	if *updateAPI {
		if err := os.WriteFile(golden, pretty, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to write it)", err)
	}
	if !bytes.Equal(want, pretty) {
		t.Errorf("the served OpenAPI document differs from %s: the API's contract changed; review it and run go test -run TestAPIOpenAPIGolden ./handlers/ -update", golden)
	}
}

// apiPaths lists the document's operations, "GET /api/v1/…".
func apiOperations(doc map[string]any) map[string]bool {
	ops := map[string]bool{}
	paths, _ := doc["paths"].(map[string]any)
	for p, item := range paths {
		for m := range item.(map[string]any) {
			ops[strings.ToUpper(m)+" "+p] = true
		}
	}
	return ops
}

func q(kv ...string) string {
	v := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		v.Set(kv[i], kv[i+1])
	}
	return "?" + v.Encode()
}
