package handlers_test

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/keydeck/keydeck/internal/route"
)

// The database page's group "legacy:*" links to a list of exactly its
// keys (flat=1): "legacy:b:…" is another group and is not on it; the page
// says which keys it holds. Without flat the list says it holds deeper
// names too.
func TestPrefixListFlatIsTheGroup(t *testing.T) {
	t.Parallel()
	f := newFixture(t, false)
	ctx := context.Background()
	for _, k := range []string{"legacy:x", "legacy:y", "legacy:b:deep", "legacy:b:c:deeper"} {
		f.redis.Client(4).Set(ctx, k, "1", 0)
	}
	rows := func(u string) ([]string, string) {
		t.Helper()
		code, _, body := get(t, f.srv.URL+u)
		if code != http.StatusOK {
			t.Fatalf("%s: %d %.300s", u, code, body)
		}
		d := doc(t, body)
		var names []string
		d.Find(`a[data-testid="key-link"]`).Each(func(_ int, s *goquery.Selection) { names = append(names, strings.TrimSpace(s.Text())) })
		slices.Sort(names)
		return names, d.Find(`[data-testid="keys-scope"]`).Text()
	}
	names, scope := rows(route.PrefixKeysURL("main", 4, "legacy:") + "&flat=1")
	if strings.Join(names, ",") != "legacy:x,legacy:y" || !strings.Contains(scope, "group “legacy:*”") || !strings.Contains(scope, "not listed here") {
		t.Errorf("flat list %v, scope %q", names, scope)
	}
	names, scope = rows(route.PrefixKeysURL("main", 4, "legacy:"))
	if len(names) != 4 || !strings.Contains(scope, "deeper names included") {
		t.Errorf("prefix list %v, scope %q", names, scope)
	}
	// Its live rows are the same keys.
	_, _, body := get(t, f.srv.URL+route.PrefixKeysURL("main", 4, "legacy:")+"&flat=1")
	ws, _ := doc(t, body).Find(`[data-testid="live"]`).Attr("ws-connect")
	topic, err := url.QueryUnescape(strings.TrimPrefix(ws, "/ws?topic="))
	if err != nil || !strings.Contains(topic, "flat=1") {
		t.Fatalf("live topic %q (%v)", topic, err)
	}
	frame := waitFrame(t, topicFrames(t, f, topic), "live rows", "legacy:x", "legacy:y")
	if strings.Contains(frame, "legacy:b:") {
		t.Errorf("the live rows hold a deeper key: %.600s", frame)
	}
	for _, bad := range []string{route.PrefixKeysURL("main", 4, "legacy:") + "&flat=2", route.FamilyKeysURL("main", 4, "slider-fail-account") + "&flat=1"} {
		if code, _, _ := get(t, f.srv.URL+bad); code != http.StatusBadRequest {
			t.Errorf("%s: %d, want 400", bad, code)
		}
	}
}
