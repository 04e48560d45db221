package handlers_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/keydeck/keydeck/internal/route"
	"github.com/keydeck/keydeck/redisview/action"
)

// Revoking API tokens writes the audit Redis's token store: an admin
// revoking another person's token, and a sign-out-everywhere revoking
// one's tokens, are recorded in the audit stream as actions are (an
// intent, then its outcome: who, whose tokens, which name — never a
// secret), and the audit page shows them, without an undo.
func TestTokenRevocationsAreAudited(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t, nil, nil)
	ctx := context.Background()
	sam := newBrowserAs(t, f, "sam")
	samTok := mintToken(t, sam, "nightly <ci>", "viewer", "30d")
	vera := newBrowserAs(t, f, "vera")
	veraTok := mintToken(t, vera, "dash", "viewer", "30d")
	ada := newBrowserAs(t, f, "ada")
	form := url.Values{"_csrf": {ada.csrf(route.AccountTokens)}, "owner": {"sam"}, "name": {"nightly <ci>"}, "confirm": {"yes"}}
	if code, _, body := ada.do(http.MethodPost, route.RevokeToken, form); code != http.StatusOK {
		t.Fatalf("ada revokes sam's token: %d %.300s", code, body)
	}
	if code, _, _ := vera.do(http.MethodPost, route.SignOutEverywhere, url.Values{"_csrf": {vera.csrf(route.Account)}, "revoke_tokens": {"yes"}}); code != http.StatusSeeOther {
		t.Fatalf("vera signs out everywhere: %d", code)
	}
	check := func(kind, user string, args map[string]string, summary string) {
		t.Helper()
		recs, _, err := f.run.ReadAudit(ctx, action.Filter{Action: kind})
		if err != nil {
			t.Fatal(err)
		}
		phases := map[string]action.Record{}
		for _, r := range recs {
			phases[r.Phase] = r
		}
		in, out := phases[action.PhaseIntent], phases[action.PhaseOutcome]
		if len(recs) != 2 || in.ID == "" || out.Ref != in.ID || out.Outcome != action.OutcomeOK {
			t.Fatalf("%s: records %+v, want an intent and its ok outcome", kind, recs)
		}
		for _, r := range recs {
			if r.User != user || r.Conn != "" || len(r.Keys) != 0 || !strings.Contains(r.Summary, summary) {
				t.Fatalf("%s %s: user %q conn %q keys %q summary %q; want %s, no connection nor key, %q", kind, r.Phase, r.User, r.Conn, r.Keys, r.Summary, user, summary)
			}
			for k, v := range args {
				if r.Args[k] != v {
					t.Fatalf("%s %s: args %q, want %s=%q", kind, r.Phase, r.Args, k, v)
				}
			}
			b, _ := json.Marshal(r)
			for _, secret := range []string{samTok, veraTok} {
				if strings.Contains(string(b), strings.TrimPrefix(secret, "kdt_")) {
					t.Fatalf("%s record holds a token's secret: %s", kind, b)
				}
			}
		}
	}
	check("revoke-token", "ada", map[string]string{"owner": "sam", "name": "nightly <ci>"}, `"nightly <ci>" of sam`)
	check("revoke-tokens", "vera", map[string]string{"owner": "vera"}, "vera")

	_, _, page := ada.do(http.MethodGet, route.Audit, nil)
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	doc.Find(`[data-testid="audit-row"]`).Each(func(_ int, s *goquery.Selection) {
		if s.Find(`[data-testid="audit-action"]`).Text() != "revoke-token" {
			return
		}
		seen++
		text := s.Text()
		if !strings.Contains(text, `"nightly <ci>" of sam`) || !strings.Contains(text, "Keydeck's own records") || strings.Contains(text, "db0") {
			t.Errorf("the audit page's row of the revocation: %q", text)
		}
		if s.Find(`[data-testid="undo"]`).Length() != 0 {
			t.Error("the audit page offers to undo a token's revocation")
		}
	})
	if seen != 2 {
		t.Fatalf("the audit page shows %d rows of the revocation, want 2: %.3000s", seen, page)
	}
}

// Revoking a token the owner does not have (or a name no token may have)
// is refused before anything is recorded: a signed-in viewer looping such
// requests cannot flood the audit log.
func TestRevokingAnUnknownTokenRecordsNothing(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t, nil, nil)
	ctx := context.Background()
	vera := newBrowserAs(t, f, "vera")
	mintToken(t, vera, "dash", "viewer", "30d")
	csrf := vera.csrf(route.AccountTokens)
	for _, name := range []string{"nope", strings.Repeat("x", 4<<10), "dash\xff"} {
		code, _, body := vera.do(http.MethodPost, route.RevokeToken, url.Values{"_csrf": {csrf}, "name": {name}, "confirm": {"yes"}})
		if code != http.StatusNotFound {
			t.Fatalf("revoke %.20q: %d, want 404: %.300s", name, code, body)
		}
	}
	if recs, _, err := f.run.ReadAudit(ctx, action.Filter{Action: "revoke-token"}); err != nil || len(recs) != 0 {
		t.Fatalf("revoking unknown tokens recorded %d records (%v)", len(recs), err)
	}
}
