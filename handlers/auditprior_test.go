package handlers_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/redisview/action"
)

// Deleting a hash and a sensitive key through the pages, the audit page's
// intent row says what was recorded of each: the DUMP's size where the
// server allows DUMP, the fields in words where the connection's ACL user
// may not DUMP, and never anything of the sensitive key.
func TestAuditPageShowsRecordedPriorState(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, user string
		hashPrior  func(string) bool
	}{
		{"dump", "", func(s string) bool {
			return strings.HasPrefix(s, "DUMP of ") && strings.HasSuffix(s, " B (hash, 2 fields)")
		}},
		{"no dump", "nodump", func(s string) bool {
			return strings.HasPrefix(s, "hash of 2 fields: ") && strings.Contains(s, `"score"="4096"`) && strings.Contains(s, `"moves"="300"`)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rs := redistest.Start(t)
			ctx := context.Background()
			connURL := rs.URL(0)
			if tc.user != "" {
				if err := rs.Client(0).Do(ctx, "acl", "setuser", tc.user, "on", ">pw", "~*", "&*", "+@all", "-dump").Err(); err != nil {
					t.Fatal(err)
				}
				connURL = "redis://" + tc.user + ":pw@" + rs.Addr + "/0"
			}
			f := newAuthFixtureURL(t, rs, connURL, nil)
			hash, secret := "mg:score:user-meta:2048:李雷", "totp:security:secret:plain:ann"
			rs.Client(14).HSet(ctx, hash, "score", "4096", "moves", "300")
			rs.Client(14).Expire(ctx, hash, time.Hour)
			rs.Client(5).Set(ctx, secret, "JBSWY3DPEHPK3PXP", 0)

			br := newBrowser(t, f.srv.URL)
			br.login("ada", "right-password")
			tok := br.csrf("/")
			for _, k := range []struct {
				db  string
				key string
			}{{"14", hash}, {"5", secret}} {
				code, _, body := br.do(http.MethodPost, "/actions/preview", url.Values{"_csrf": {tok}, "kind": {action.KindDeleteKey}, "conn": {"main"}, "db": {k.db}, "key": {k.key}})
				if code != http.StatusOK {
					t.Fatalf("preview delete %s: %d %.300s", k.key, code, body)
				}
				m := regexpToken.FindStringSubmatch(body)
				if m == nil {
					t.Fatal("no confirmation token")
				}
				if code, _, body = br.follow(http.MethodPost, "/actions/execute", url.Values{"_csrf": {tok}, "token": {m[1]}}); code != http.StatusOK {
					t.Fatalf("execute delete %s: %d %.300s", k.key, code, body)
				}
			}

			code, _, body := br.do(http.MethodGet, "/audit?action="+action.KindDeleteKey, nil)
			if code != http.StatusOK {
				t.Fatalf("audit page: %d", code)
			}
			if strings.Contains(body, "JBSWY3DPEHPK3PXP") {
				t.Fatal("the audit page shows a sensitive value")
			}
			doc, err := goquery.NewDocumentFromReader(strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			priors := map[string]string{}
			doc.Find(`[data-testid="audit-target"]`).Each(func(_ int, s *goquery.Selection) {
				priors[strings.TrimSpace(s.Find(`[data-testid="audit-target-key"]`).Text())] = s.Find(`[data-testid="audit-target-prior"]`).Text()
				if s.Find(`[data-testid="audit-target-key"]`).Text() != "" && !strings.Contains(s.Text(), "TTL") {
					t.Errorf("target %q says nothing of its TTL: %q", s.Find(`[data-testid="audit-target-key"]`).Text(), s.Text())
				}
			})
			if len(priors) != 2 {
				t.Fatalf("prior states shown: %q", priors)
			}
			if got := priors[hash]; !tc.hashPrior(got) {
				t.Errorf("hash recorded as %q", got)
			}
			if got := priors[secret]; got != "sensitive: not recorded" {
				t.Errorf("secret recorded as %q", got)
			}
			if n := doc.Find(`[data-testid="audit-row"]`).Length(); n != 4 {
				t.Errorf("%d audit rows, want an intent and an outcome per delete", n)
			}
		})
	}
}
