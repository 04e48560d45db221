package handlers_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
)

func homeFigures(t *testing.T, f *console) map[string]string {
	t.Helper()
	code, _, body := get(t, f.srv.URL+"/")
	if code != http.StatusOK {
		t.Fatalf("status %d", code)
	}
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{"page": doc.Find(`[data-testid="connections"]`).Text()}
	for _, id := range []string{"keys", "memory", "ops", "pack"} {
		out[id] = strings.TrimSpace(doc.Find(`[data-testid="conn-main"] [data-testid="` + id + `"]`).Text())
	}
	return out
}

// The connections page shows each connection's keys, memory, ops/sec and
// pack; while it is down, no figure but "disconnected since".
func TestHomeShowsEachConnectionsFigures(t *testing.T) {
	t.Parallel()
	f := newFixture(t, false)
	ctx := context.Background()
	f.redis.Client(3).Set(ctx, "a", "1", 0)
	f.redis.Client(4).Set(ctx, "b", "2", 0)
	got := homeFigures(t, f)
	if got["keys"] == "—" || got["keys"] == "0" || got["keys"] == "" {
		t.Errorf("keys %q", got["keys"])
	}
	if !strings.HasSuffix(got["memory"], "B") {
		t.Errorf("memory %q", got["memory"])
	}
	if got["ops"] == "" || got["ops"] == "—" {
		t.Errorf("ops/sec %q", got["ops"])
	}
	if got["pack"] != "eisland" {
		t.Errorf("pack %q", got["pack"])
	}

	f.redis.Stop()
	waitFor(t, "monitor sees redis down", func() bool { return !f.reg.All()[0].Status().Up })
	got = homeFigures(t, f)
	if got["keys"] != "—" || got["memory"] != "—" || got["ops"] != "—" || !strings.Contains(got["page"], "disconnected since") {
		t.Errorf("while down: %q", got)
	}
}
