package metrics_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/handlers"
	"github.com/keydeck/keydeck/internal/demo"
	"github.com/keydeck/keydeck/internal/metrics"
	"github.com/keydeck/keydeck/internal/people"
	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/internal/server"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/action"
)

// startConsole runs the console on a redis-server holding the eIsland
// demo's seeds, with /metrics's keeper on.
func startConsole(t *testing.T, auth handlers.Auth) *httptest.Server {
	t.Helper()
	rs := redistest.Start(t)
	if err := demo.SeedEIsland(context.Background(), func(db int) redis.Cmdable { return rs.Client(db) }, time.Now()); err != nil {
		t.Fatal(err)
	}
	if len(auth.Secret) == 0 {
		auth.Secret = []byte("0123456789abcdef0123456789abcdef")
	}
	s, err := server.Start(context.Background(), server.Config{
		Conns: []redisview.ConnConfig{{Name: "eisland", URL: rs.URL(0)}}, PackFor: map[string]string{"eisland": "eisland"},
		Auth: auth, MetricsBans: true, MetricsKeep: true, MetricsInterval: time.Second,
	}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(func() { srv.Close(); s.Close() })
	return srv
}

// /metrics on the console's listener is for signed-in identities: an
// anonymous scrape gets 401 as problem+json, never a redirect to sign in.
func TestMetricsNeedSignIn(t *testing.T) {
	srv := startConsole(t, handlers.Auth{Users: people.NewUsers(people.User{Name: "ann", Level: action.Viewer}),
		TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}, UserHeader: "X-Forwarded-User"})
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(user string) (*http.Response, string) {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+metrics.Path, nil)
		if user != "" {
			req.Header.Set("X-Forwarded-User", user)
		}
		res, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res, string(b)
	}
	res, body := get("")
	if res.StatusCode != http.StatusUnauthorized || res.Header.Get("Location") != "" ||
		res.Header.Get("Content-Type") != "application/problem+json" || !strings.Contains(body, `"status":401`) {
		t.Fatalf("anonymous: %d %v %s", res.StatusCode, res.Header, body)
	}
	res, body = get("ann")
	if res.StatusCode != http.StatusOK || !strings.Contains(body, "keydeck_redis_commands_total{conn=\"eisland\"}") {
		t.Fatalf("viewer: %d %s", res.StatusCode, body)
	}
}

// A real Prometheus server scrapes the console, and its HTTP API answers
// a query for keydeck_ban_set_members with a value.
func TestPrometheusScrapesKeydeck(t *testing.T) {
	bin, err := exec.LookPath("prometheus")
	if err != nil {
		t.Skip("prometheus is not installed (make deps installs Debian's prometheus package)")
	}
	srv := startConsole(t, handlers.Auth{})
	target := strings.TrimPrefix(srv.URL, "http://")
	dir := t.TempDir()
	cfg := fmt.Sprintf("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n  - job_name: keydeck\n    metrics_path: %s\n    static_configs:\n      - targets: [%q]\n", metrics.Path, target)
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", redistest.FreePort(t))
	cmd := exec.Command(bin, "--config.file="+filepath.Join(dir, "prometheus.yml"), "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr, "--log.level=warn")
	var logs strings.Builder
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	})
	q := "http://" + addr + "/api/v1/query?query=" + url.QueryEscape(`keydeck_ban_set_members{list="user-ban-bloom"}`)
	var got string
	redistest.Eventually(t, 90*time.Second, "Prometheus answers keydeck_ban_set_members", func() bool {
		res, err := http.Get(q)
		if err != nil {
			return false
		}
		defer res.Body.Close()
		var body struct {
			Status string
			Data   struct {
				Result []struct {
					Metric map[string]string
					Value  [2]any
				}
			}
		}
		if json.NewDecoder(res.Body).Decode(&body) != nil || body.Status != "success" || len(body.Data.Result) == 0 {
			return false
		}
		r := body.Data.Result[0]
		got = fmt.Sprintf("%v = %v", r.Metric, r.Value[1])
		return r.Metric["conn"] == "eisland" && r.Metric["db"] == "9" && r.Value[1] != "0"
	})
	t.Logf("Prometheus: %s", got)
}
