package handlers_test

import (
	"encoding/json"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// A bearer request carries no Set-Cookie, whatever it asks and however it
// ends: every operation of the API (walked from its OpenAPI document) and
// every route of the console's route table, with a valid admin token,
// asked without a body's fields or with them wrong.
func TestBearerRequestsSetNoCookieOnAnyRoute(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t, nil, nil)
	tok := mintToken(t, newBrowserAs(t, f, "ada"), "crawler", "admin", "1d")
	code, _, spec := bearer(t, f.srv.URL, http.MethodGet, "/api/v1/openapi.json", tok, nil)
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal([]byte(spec), &doc); code != http.StatusOK || err != nil || len(doc.Paths) == 0 {
		t.Fatalf("the OpenAPI document: %d %v", code, err)
	}
	type req struct{ method, path string }
	var reqs []req
	param := regexp.MustCompile(`\{[^}]+\}|:[a-z]+|\*$`)
	fill := func(p string) string {
		return param.ReplaceAllStringFunc(p, func(m string) string {
			switch strings.Trim(m, "{}:") {
			case "conn":
				return "main"
			case "n", "db":
				return "0"
			}
			return "x"
		})
	}
	for p, ops := range doc.Paths {
		for m := range ops {
			if m = strings.ToUpper(m); m == http.MethodGet || m == http.MethodPost || m == http.MethodPut || m == http.MethodDelete || m == http.MethodPatch {
				reqs = append(reqs, req{m, fill(p)})
			}
		}
	}
	apiOps := len(reqs)
	for _, r := range f.routes {
		reqs = append(reqs, req{r.Method, fill(r.Path)})
	}
	sort.Slice(reqs, func(i, j int) bool { return reqs[i].path+reqs[i].method < reqs[j].path+reqs[j].method })
	if apiOps < 10 {
		t.Fatalf("only %d API operations in the OpenAPI document", apiOps)
	}
	for _, r := range reqs {
		for _, accept := range []string{"application/json", "text/html"} {
			code, hdr, _ := bearer(t, f.srv.URL, r.method, r.path, tok, nil, "Accept", accept, "Content-Type", "application/json")
			if c := hdr.Values("Set-Cookie"); len(c) != 0 {
				t.Errorf("bearer %s %s (Accept %s): %d with Set-Cookie %q", r.method, r.path, accept, code, c)
			}
		}
	}
	t.Logf("%d requests (%d API operations), none set a cookie", len(reqs), apiOps)
}
