package handlers_test

import (
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/internal/server"
	"github.com/keydeck/keydeck/redisview"
)

// The overview's headroom flags a maxmemory-policy other than noeviction
// on a connection whose pack is vertique's (Bucket4j buckets need a Redis
// that never evicts), and only there; it says the memory headroom and the
// key count.
func TestOverviewFlagsEvictingPolicyForVertique(t *testing.T) {
	t.Parallel()
	lru := redistest.Start(t, "--maxmemory-policy", "allkeys-lru", "--maxmemory", "64mb")
	plain := redistest.Start(t)
	f := startConsole(t, lru, server.Config{
		Conns:   []redisview.ConnConfig{{Name: "vt", URL: lru.URL(0)}, {Name: "vtok", URL: plain.URL(0)}, {Name: "ei", URL: lru.URL(1)}},
		PackFor: map[string]string{"vt": "vertique", "vtok": "vertique", "ei": "eisland"},
	}, nil)
	flagged := regexp.MustCompile(`data-testid="policy" data-flagged>([^<]*)<`)
	for _, c := range []struct {
		conn, policy string
		flag         bool
	}{{"vt", "allkeys-lru", true}, {"vtok", "noeviction", false}, {"ei", "allkeys-lru", false}} {
		code, _, body := get(t, f.srv.URL+"/c/"+c.conn)
		if code != http.StatusOK || !strings.Contains(body, `data-testid="headroom"`) {
			t.Fatalf("%s: %d, headroom shown %v", c.conn, code, strings.Contains(body, `data-testid="headroom"`))
		}
		m := flagged.FindStringSubmatch(body)
		if (m != nil) != c.flag || m != nil && m[1] != c.policy || !strings.Contains(body, ">"+c.policy+"<") {
			t.Errorf("%s: flagged %q, want flagged %v with %s", c.conn, m, c.flag, c.policy)
		}
		if c.flag && !strings.Contains(body, "vertique needs a non-evicting Redis") {
			t.Errorf("%s: the flag does not say why", c.conn)
		}
	}
	if _, _, body := get(t, f.srv.URL+"/c/vt"); !strings.Contains(body, "free of 64.0 MiB") {
		t.Errorf("vt: no memory headroom against its 64 MiB maxmemory")
	}
	if _, _, body := get(t, f.srv.URL+"/c/vtok"); !strings.Contains(body, "no maxmemory set") {
		t.Errorf("vtok: the missing maxmemory is not said")
	}
}
