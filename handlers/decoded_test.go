package handlers_test

import (
	"context"
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/keydeck/keydeck/handlers/route"
)

// The key page decodes a key by its pack role above the raw value: an
// empty slider bucket shows its tokens, capacity and that a request is
// refused; a login lock its unlock time. A sensitive key has no decoded
// panel and its value appears nowhere.
func TestKeyPageDecodesByRole(t *testing.T) {
	f := newAuthFixture(t, nil, nil)
	ctx := context.Background()
	bucket := "verify:slider:rate:create:account:" + base64.RawURLEncoding.EncodeToString([]byte("ada"))
	f.redis.Client(4).HSet(ctx, bucket, "tokens", "0", "ts", strconv.FormatInt(time.Now().UnixMilli(), 10))
	until := time.Now().Add(10 * time.Minute).UTC()
	f.redis.Client(6).Set(ctx, "auth:limit:login:lock:ada", strconv.FormatInt(until.UnixMilli(), 10), 10*time.Minute)
	f.redis.Client(5).Set(ctx, "totp:security:secret:plain:ada", "JBSWY3DPEHPK3PXP", 0)
	br := newBrowser(t, f.srv.URL)
	br.login("ada", "right-password")

	code, _, body := br.do(http.MethodGet, route.KeyURL("main", 4, bucket), nil)
	doc := valueDoc(t, body)
	panel := doc.Find(`[data-testid="key-decoded"]`)
	if code != http.StatusOK || panel.Length() != 1 {
		t.Fatalf("bucket page: %d, %d decoded panels", code, panel.Length())
	}
	if sum := strings.TrimSpace(panel.Find(`[data-testid="decoded-summary"]`).Text()); !strings.HasPrefix(sum, "0") || !strings.HasSuffix(sum, "of 12 tokens now") {
		t.Fatalf("bucket summary %q", sum)
	}
	if alert := panel.Find(`[data-testid="decoded-alert"]`).Text(); !strings.Contains(alert, "refused") {
		t.Fatalf("empty bucket alert %q", alert)
	}
	rows := panel.Find(`[data-testid="decoded-rows"]`).Text()
	for _, want := range []string{"Capacity", "12", "Last refill", "UTC", "Full in"} {
		if !strings.Contains(rows, want) {
			t.Fatalf("bucket rows lack %q: %q", want, rows)
		}
	}
	// Above the raw value.
	if html, _ := doc.Html(); strings.Index(html, `data-testid="key-value"`) < 0 || strings.Index(html, `data-testid="key-decoded"`) > strings.Index(html, `data-testid="key-value"`) {
		t.Fatal("the decoded panel is below the raw value")
	}

	_, _, body = br.do(http.MethodGet, route.KeyURL("main", 6, "auth:limit:login:lock:ada"), nil)
	if sum := valueDoc(t, body).Find(`[data-testid="decoded-summary"]`).Text(); !strings.Contains(sum, "Locked until "+until.Format("2006-01-02 15:04:05")+" UTC") {
		t.Fatalf("login lock summary %q", sum)
	}

	f.redis.Client(11).Set(ctx, "qweather:quota:provider:qweather:202612", "12500", 0)
	_, _, body = br.do(http.MethodGet, route.KeyURL("main", 11, "qweather:quota:provider:qweather:202612"), nil)
	if sum := valueDoc(t, body).Find(`[data-testid="decoded-summary"]`).Text(); !strings.Contains(sum, "12,500 / 50,000 calls this month (25.0%)") {
		t.Fatalf("quota summary %q", sum)
	}

	code, _, body = br.do(http.MethodGet, route.KeyURL("main", 5, "totp:security:secret:plain:ada"), nil)
	doc = valueDoc(t, body)
	if code != http.StatusOK || doc.Find(`[data-testid="key-decoded"]`).Length() != 0 || strings.Contains(body, "JBSWY3DPEHPK3PXP") {
		t.Fatalf("sensitive key: %d, decoded panels %d", code, doc.Find(`[data-testid="key-decoded"]`).Length())
	}
}
