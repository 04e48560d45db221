package handlers_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/keydeck/keydeck/handlers"
)

// /readyz stays public for probes, but only signed-in users (or everyone,
// with --readyz-detail) learn which connections are down.
func TestReadyzDetailOnlyForSignedInOrFlag(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t, nil, nil)
	detailed := newAuthFixture(t, f.redis, func(a *handlers.Auth) { a.ReadyzDetail = true })
	ada := newBrowser(t, f.srv.URL)
	if code := ada.login("ada", "right-password"); code != http.StatusSeeOther {
		t.Fatalf("login: %d", code)
	}
	f.redis.Stop()
	waitFor(t, "monitor sees the server down", func() bool { return !f.reg.All()[0].Status().Up && !detailed.reg.All()[0].Status().Up })

	code, _, body := newBrowser(t, f.srv.URL).do(http.MethodGet, "/readyz", nil)
	if code != http.StatusServiceUnavailable || body != "not ready\n" {
		t.Fatalf("anonymous /readyz: %d %q, want a bare 503 naming nothing", code, body)
	}
	code, _, body = ada.do(http.MethodGet, "/readyz", nil)
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "main: unreachable since") {
		t.Fatalf("signed-in /readyz: %d %q, want the detail", code, body)
	}
	code, _, body = newBrowser(t, detailed.srv.URL).do(http.MethodGet, "/readyz", nil)
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "main: unreachable since") {
		t.Fatalf("anonymous /readyz with ReadyzDetail: %d %q, want the detail", code, body)
	}
}
