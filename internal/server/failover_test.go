package server_test

import (
	"context"
	"fmt"
	"html"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/keydeck/keydeck/handlers"
	"github.com/keydeck/keydeck/internal/demo"
	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/internal/route"
	"github.com/keydeck/keydeck/internal/server"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/schema"
	"github.com/keydeck/keydeck/redisview/vertique"
)

// console starts Keydeck (open, no users) on conns with its audit stream
// on a server of its own, and serves it.
func console(t *testing.T, secret []byte, conns ...redisview.ConnConfig) *httptest.Server {
	t.Helper()
	audit := redistest.Start(t)
	conns = append(conns, redisview.ConnConfig{Name: "audit", URL: audit.URL(0)})
	s, err := server.Start(context.Background(), server.Config{
		Conns:    conns,
		Auth:     handlers.Auth{Open: true, Secret: []byte("0123456789abcdef0123456789abcdef")},
		Audit:    "audit/15",
		Vertique: handlers.VertiqueSecret{Secret: secret, From: "test"},
	}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(func() { srv.Close(); s.Close() })
	return srv
}

// get is a page's status and body ("" and the error when it fails).
func get(srv *httptest.Server, path string) (int, string) {
	res, err := http.Get(srv.URL + path)
	if err != nil {
		return 0, err.Error()
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	// Names carry <wbr> between their parts (views.Wrapped): the checks
	// below look for the names as text.
	return res.StatusCode, strings.ReplaceAll(string(b), "<wbr>", "")
}

// bucketState is a vertique bucket's value: 3 of 5 tokens.
func bucketState() string {
	return string(demo.EncodeBucketState(demo.BucketState{Format: 1,
		Bandwidths: []demo.Bandwidth{{Capacity: 5, InitialTokens: 5, RefillPeriodNanos: int64(time.Hour), RefillTokens: 5, TimeOfFirstRefillMillis: demo.NotAligned}},
		States:     []demo.BandwidthState{{LastRefillNanos: time.Now().UnixNano(), Tokens: 3}}}))
}

// pagesAnswer checks, once, that the key page of key, the key list of
// the fo: keys, a search for one and the vertique lookup of the caller
// whose bucket is bucket answer with them; it says what did not.
func pagesAnswer(srv *httptest.Server, conn, key string, fo []string, caller []string, bucket string) error {
	if st, body := get(srv, route.KeyURL(conn, 0, key)); st != http.StatusOK || !strings.Contains(body, html.EscapeString(key)) {
		return fmt.Errorf("key page of %q: %d", key, st)
	}
	st, body := get(srv, route.PrefixKeysURL(conn, 0, "fo:"))
	if st != http.StatusOK {
		return fmt.Errorf("key list: %d", st)
	}
	for _, k := range fo {
		if !strings.Contains(body, k+"<") && !strings.Contains(body, k+"\"") {
			return fmt.Errorf("key list: %q missing", k)
		}
	}
	if st, body := get(srv, route.SearchURL(conn, fo[0])); st != http.StatusOK || !strings.Contains(body, fo[0]) {
		return fmt.Errorf("search for %q: %d", fo[0], st)
	}
	q := url.Values{"policy": {caller[0]}, "revision": {caller[1]}, "key": {caller[2]}}
	if st, body := get(srv, route.VertiqueURL(conn)+"?"+q.Encode()); st != http.StatusOK || !strings.Contains(body, bucket) || !strings.Contains(body, "3 of 5") {
		return fmt.Errorf("vertique lookup of %v: %d (bucket %s shown: %v)", caller, st, bucket, strings.Contains(body, bucket))
	}
	return nil
}

// TestPagesWorkAfterAClusterFailover: a key page, the key list, a search
// and a vertique lookup of keys on a primary that is killed answer again,
// from its promoted replica, soon after the cluster has failed over —
// without restarting Keydeck.
func TestPagesWorkAfterAClusterFailover(t *testing.T) {
	t.Parallel()
	cl := redistest.StartCluster(t)
	ctx := context.Background()
	cc := cl.Client()
	f, err := vertique.Family(schema.BuiltinPack("vertique"))
	if err != nil {
		t.Fatal(err)
	}
	secret := []byte("secret-now")
	state := bucketState()
	for i := range 300 {
		k, err := vertique.Key(f, secret, "p", "1", strconv.Itoa(i))
		if err != nil {
			t.Fatal(err)
		}
		if err := cc.Set(ctx, k, state, time.Hour).Err(); err != nil {
			t.Fatal(err)
		}
	}
	p := cl.Primaries()[1]
	var caller []string
	var bucket string
	for i := range 300 {
		k, _ := vertique.Key(f, secret, "p", "1", strconv.Itoa(i))
		if cl.NodeOf(k) == p {
			caller, bucket = []string{"p", "1", strconv.Itoa(i)}, k
			break
		}
	}
	var fo []string
	for i := 0; len(fo) < 10; i++ {
		k := "fo:" + strconv.Itoa(i)
		if cl.NodeOf(k) == p {
			fo = append(fo, k)
			if err := cc.Set(ctx, k, "v", 0).Err(); err != nil {
				t.Fatal(err)
			}
		}
	}
	cl.WaitReplicated(30 * time.Second) // the failover loses no key
	srv := console(t, secret, redisview.ConnConfig{Name: "c", URL: cl.URL()})
	var last error
	redistest.Eventually(t, 60*time.Second, "the pages answer before the failover", func() bool {
		last = pagesAnswer(srv, "c", bucket, fo, caller, bucket)
		return last == nil
	})
	p.Stop()
	cl.WaitFailover(p, 30*time.Second)
	start := time.Now()
	// go-redis reads a cluster's slot map again on its own every 60 s: a
	// console that waits for that is not following the failover.
	redistest.Eventually(t, 20*time.Second, "the pages answer after the failover", func() bool {
		prev := last
		if last = pagesAnswer(srv, "c", bucket, fo, caller, bucket); last != nil && (prev == nil || prev.Error() != last.Error()) {
			t.Logf("%v after the failover: %v", time.Since(start).Round(time.Millisecond), last)
		}
		return last == nil
	})
	t.Logf("pages answer %v after the cluster agreed on the failover", time.Since(start))
}

// TestPagesWorkAfterASentinelFailover: behind sentinels, a key page, the
// key list and a search read the promoted replica soon after the
// sentinel has failed over — without restarting Keydeck.
func TestPagesWorkAfterASentinelFailover(t *testing.T) {
	t.Parallel()
	sn := redistest.StartSentinel(t)
	ctx := context.Background()
	pc := sn.Primary.Client(0)
	f, err := vertique.Family(schema.BuiltinPack("vertique"))
	if err != nil {
		t.Fatal(err)
	}
	state := bucketState()
	for i := range 200 { // the pack: vertique's
		k, err := vertique.Key(f, []byte("s"), "p", "1", strconv.Itoa(i))
		if err != nil {
			t.Fatal(err)
		}
		if err := pc.Set(ctx, k, state, time.Hour).Err(); err != nil {
			t.Fatal(err)
		}
	}
	var fo []string
	for i := range 10 {
		k := "fo:" + strconv.Itoa(i)
		fo = append(fo, k)
		if err := pc.Set(ctx, k, "v", 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	sn.WaitReplicated(30 * time.Second)
	srv := console(t, nil, redisview.ConnConfig{Name: "s", URL: sn.URL(0)})
	answer := func() error {
		if st, body := get(srv, route.KeyURL("s", 0, fo[3])); st != http.StatusOK || !strings.Contains(body, fo[3]) {
			return fmt.Errorf("key page of %q: %d", fo[3], st)
		}
		st, body := get(srv, route.PrefixKeysURL("s", 0, "fo:"))
		if st != http.StatusOK {
			return fmt.Errorf("key list: %d %.300s", st, body[max(0, strings.Index(body, "error-detail")):])
		}
		for _, k := range fo {
			if !strings.Contains(body, k+"<") && !strings.Contains(body, k+"\"") {
				return fmt.Errorf("key list: %q missing", k)
			}
		}
		if st, body := get(srv, route.SearchURL("s", fo[0])); st != http.StatusOK || !strings.Contains(body, fo[0]) {
			return fmt.Errorf("search for %q: %d", fo[0], st)
		}
		return nil
	}
	var last error
	redistest.Eventually(t, 60*time.Second, "the pages answer before the failover", func() bool {
		prev := last
		last = answer()
		if last != nil && (prev == nil || prev.Error() != last.Error()) {
			t.Logf("before the failover: %v", last)
		}
		return last == nil
	})
	sn.KillPrimary(30 * time.Second)
	start := time.Now()
	redistest.Eventually(t, 20*time.Second, "the pages answer after the failover", func() bool {
		prev := last
		if last = answer(); last != nil && (prev == nil || prev.Error() != last.Error()) {
			t.Logf("%v after the failover: %v", time.Since(start).Round(time.Millisecond), last)
		}
		return last == nil
	})
	t.Logf("pages answer %v after the sentinel named the new primary", time.Since(start))
}
