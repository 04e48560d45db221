package handlers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/labstack/echo/v4"

	"github.com/keydeck/keydeck/handlers"
	"github.com/keydeck/keydeck/internal/live"
	"github.com/keydeck/keydeck/internal/people"
	"github.com/keydeck/keydeck/internal/route"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/action"
	"github.com/keydeck/keydeck/redisview/schema"
)

// Fakes of the App's collaborators: no Redis anywhere.

// fakeAudit is an audit log in memory that remembers what it was asked.
type fakeAudit struct {
	recs    []action.Record
	next    string
	filters []action.Filter
}

func (f *fakeAudit) ReadAudit(_ context.Context, flt action.Filter) ([]action.Record, string, error) {
	f.filters = append(f.filters, flt)
	return f.recs, f.next, nil
}

func (f *fakeAudit) AuditRecord(_ context.Context, id string) (action.Record, error) {
	for _, r := range f.recs {
		if r.ID == id {
			return r, nil
		}
	}
	return action.Record{}, fmt.Errorf("%w: no audit record %s", action.ErrNotFound, id)
}

type noConns struct{}

func (noConns) All() []*redisview.Conn { return nil }
func (noConns) Get(name string) (*redisview.Conn, error) {
	return nil, fmt.Errorf("%w %q", redisview.ErrUnknownConnection, name)
}
func (noConns) Packs() []*schema.Pack { return nil }

type noHub struct{}

func (noHub) Subscribe(string, func() live.Source, *live.Outbox) func() { return func() {} }
func (noHub) Kick(string)                                               {}
func (noHub) Stats() live.Stats                                         { return live.Stats{} }

type noLimiter struct{}

func (noLimiter) Attempt(context.Context, string, string) people.Verdict { return people.Verdict{} }
func (noLimiter) Succeeded(context.Context, string, string)              {}
func (noLimiter) Lockouts(context.Context, int) ([]people.Lockout, int, error) {
	return nil, 0, nil
}
func (noLimiter) Clear(context.Context, string, string) error                { return nil }
func (noLimiter) Locked(context.Context, string, string) time.Duration       { return 0 }
func (noLimiter) ReserveGuess(context.Context, string) (time.Duration, bool) { return 0, false }
func (noLimiter) ReleaseGuess(context.Context, string)                       {}

// fakeConsole serves the App over fakes, in open mode.
func fakeConsole(t *testing.T, audit handlers.AuditLog) *echo.Echo {
	t.Helper()
	e := echo.New()
	handlers.New(handlers.Deps{Conns: noConns{}, Hub: noHub{}, Audit: audit, Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Auth: handlers.Auth{Open: true, Secret: []byte("0123456789abcdef0123456789abcdef"), Limiter: noLimiter{}}}).Routes(e)
	return e
}

func serve(e *echo.Echo, method, target string, hdr ...string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, target, nil)
	req.Host = "127.0.0.1" // open mode answers loopback names only
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, req)
	return rec
}

// The audit page is tested against a fake audit log: the filter it passes
// down, the rows it shows, the page links it builds, and a bad filter
// refused before the log is asked.
func TestAuditPageWithFakeLog(t *testing.T) {
	t.Parallel()
	log := &fakeAudit{next: "5-0", recs: []action.Record{
		{ID: "7-0", Time: time.Date(2026, 11, 29, 14, 30, 5, 0, time.UTC), Phase: action.PhaseOutcome, User: "ada", Level: "admin",
			Action: action.KindDeleteKey, Conn: "main", DB: 3, Keys: []string{"conf:\xff"}, Summary: "delete a key", Outcome: "ok"},
		{ID: "6-0", Time: time.Date(2026, 11, 29, 14, 29, 0, 0, time.UTC), Phase: action.PhaseIntent, User: "ada", Level: "admin",
			Action: action.KindDeleteKey, Conn: "main", DB: 3, Keys: []string{"conf:\xff"}, Summary: "delete a key",
			Targets: []action.Target{{Key: "conf:\xff", Type: "none", PTTL: -2}}},
	}}
	e := fakeConsole(t, log)
	tests := []struct {
		target string
		status int
		rows   int
		filter action.Filter
	}{
		{"/audit", http.StatusOK, 2, action.Filter{Limit: 50}},
		{"/audit?user=+ada+&until=2026-11-29T14:30", http.StatusOK, 2,
			action.Filter{User: "ada", Until: time.Date(2026, 11, 29, 14, 30, 59, 999e6, time.UTC), Limit: 50}},
		{"/audit?since=yesterday", http.StatusBadRequest, 0, action.Filter{}},
	}
	for _, tt := range tests {
		log.filters = nil
		rec := serve(e, http.MethodGet, tt.target)
		if rec.Code != tt.status {
			t.Fatalf("%s: status %d, want %d: %.300s", tt.target, rec.Code, tt.status, rec.Body)
		}
		if tt.status != http.StatusOK {
			if len(log.filters) != 0 {
				t.Errorf("%s: the audit log was read", tt.target)
			}
			continue
		}
		if len(log.filters) != 1 || log.filters[0] != tt.filter {
			t.Errorf("%s: read the log with %+v, want %+v", tt.target, log.filters, tt.filter)
		}
		doc, err := goquery.NewDocumentFromReader(rec.Body)
		if err != nil {
			t.Fatal(err)
		}
		if n := doc.Find(`[data-testid="audit-row"]`).Length(); n != tt.rows {
			t.Errorf("%s: %d rows, want %d", tt.target, n, tt.rows)
		}
		if keys := doc.Find(`[data-testid="audit-keys"]`).First().Text(); !strings.Contains(keys, `conf:\xff`) {
			t.Errorf("%s: keys %q, want the name escaped", tt.target, keys)
		}
		if undo := doc.Find(`[data-testid="undo"]`).Length(); undo != 0 {
			t.Errorf("%s: %d undo links without an action runner", tt.target, undo)
		}
		// The older page keeps the filter and adds where it starts.
		older, _ := doc.Find(`[data-testid="audit-older"]`).Attr("href")
		want := route.AuditFilter{User: tt.filter.User, Before: "5-0"}
		if !tt.filter.Until.IsZero() {
			want.Until = tt.filter.Until.Truncate(time.Minute)
		}
		if older != want.URL() {
			t.Errorf("%s: older records at %q, want %q", tt.target, older, want.URL())
		}
	}

	// The same page as JSON: the API's list-audit (the filter applied),
	// the key that is not UTF-8 as {"b64": …}; a bad filter is the same
	// 400, as a problem.
	rec := serve(e, http.MethodGet, "/audit?user=ada", "Accept", "application/json")
	var vm struct {
		Entries struct {
			Items []struct {
				ID    string
				Actor struct{ User string }
				Conn  string
				DB    int
				Keys  []json.RawMessage
			}
			Next *string
		}
	}
	if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &vm) != nil {
		t.Fatalf("JSON: %d %.300s", rec.Code, rec.Body)
	}
	items := vm.Entries.Items
	if len(items) != 2 || items[0].ID != "7-0" || items[0].Actor.User != "ada" || items[1].Actor.User != "ada" || items[0].Conn != "main" || items[0].DB != 3 ||
		string(items[0].Keys[0]) != `{"b64":"Y29uZjr/"}` || vm.Entries.Next == nil || *vm.Entries.Next != "5-0" {
		t.Errorf("JSON: %s", rec.Body)
	}
	if rec := serve(e, http.MethodGet, "/audit?since=yesterday", "Accept", "application/json"); rec.Code != http.StatusBadRequest ||
		!strings.HasPrefix(rec.Header().Get("Content-Type"), "application/problem+json") || !strings.Contains(rec.Body.String(), `"status":400`) {
		t.Errorf("bad filter as JSON: %d %s", rec.Code, rec.Body)
	}
}
