package handlers_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/keydeck/keydeck/handlers"
	"github.com/keydeck/keydeck/internal/people"
	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/internal/server"
	"github.com/keydeck/keydeck/redisview/action"
)

// A bearer token's /api/v1 GET needs no cookie and sets none; a viewer's
// token may read but not act: POST actions/execute is a 403 problem, not a
// redirect nor a page.
func TestAPITokenBearerReadsAndViewerCannotAct(t *testing.T) {
	t.Parallel()
	rs := redistest.Start(t)
	f := startConsole(t, rs, server.Config{Auth: handlers.Auth{Users: testUsers(), Secret: []byte(testSecret)}}, nil).up(t)
	store := people.NewTokenStore(rs.Client(15))
	owner, _ := testUsers().Lookup("vera") // a token is bound to its owner's account
	vera, _, err := store.Create(context.Background(), owner, "dashboard", action.Viewer, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	code, hdr, body := bearer(t, f.srv.URL, http.MethodGet, "/api/v1/connections", vera, nil)
	if code != http.StatusOK || len(hdr.Values("Set-Cookie")) != 0 || !strings.HasPrefix(hdr.Get("Content-Type"), "application/json") {
		t.Fatalf("bearer GET /api/v1/connections: %d, Set-Cookie %q, %s: %.300s", code, hdr.Values("Set-Cookie"), hdr.Get("Content-Type"), body)
	}
	if code, _, _ := bearer(t, f.srv.URL, http.MethodGet, "/api/v1/connections", "", nil); code != http.StatusUnauthorized {
		t.Fatalf("anonymous GET /api/v1/connections: %d, want 401", code)
	}
	req, _ := http.NewRequest(http.MethodPost, f.srv.URL+"/api/v1/actions/execute", strings.NewReader(`{"token":"x"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+vera)
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var p struct{ Status int }
	if err := json.NewDecoder(res.Body).Decode(&p); err != nil || res.StatusCode != http.StatusForbidden || p.Status != http.StatusForbidden ||
		res.Header.Get("Content-Type") != "application/problem+json" || len(res.Header.Values("Set-Cookie")) != 0 {
		t.Fatalf("a viewer token's execute: %d %s %+v (%v), Set-Cookie %q", res.StatusCode, res.Header.Get("Content-Type"), p, err, res.Header.Values("Set-Cookie"))
	}
}
