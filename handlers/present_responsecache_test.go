package handlers_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/keydeck/keydeck/internal/route"
)

// The gateway's cached response shows its body size, TTL and whether the
// JSON parses, in HTML and JSON; a broken body without a TTL is alerted.
func TestKeyPageDecodesResponseCache(t *testing.T) {
	t.Parallel()
	f, rs := opsConsole(t, nil)
	ctx := context.Background()
	const ok, broken = "cache:exact:chat-default:00aa", "cache:exact:chat-default:00bb"
	rs.Client(0).Set(ctx, ok, `{"id":"chatcmpl-1","choices":[]}`, 10*time.Minute)
	rs.Client(0).Set(ctx, broken, `{"id":"chat`, 0)

	code, _, body := get(t, f.srv.URL+route.KeyURL("gateway", 0, ok))
	panel := valueDoc(t, body).Find(`[data-testid="key-decoded"]`)
	if code != http.StatusOK || panel.Length() != 1 {
		t.Fatalf("cached response page: %d, %d decoded panels", code, panel.Length())
	}
	if sum := strings.TrimSpace(panel.Find(`[data-testid="decoded-summary"]`).Text()); !strings.HasPrefix(sum, "32 B JSON body, ") || !strings.HasSuffix(sum, " left") {
		t.Fatalf("summary %q", sum)
	}
	if rows := panel.Find(`[data-testid="decoded-rows"]`).Text(); !strings.Contains(rows, "valid") || !strings.Contains(rows, "Served until") {
		t.Fatalf("rows %q", rows)
	}
	if alert := panel.Find(`[data-testid="decoded-alert"]`); alert.Length() != 0 {
		t.Fatalf("a valid body with a TTL is alerted: %q", alert.Text())
	}

	code, _, js := get(t, f.srv.URL+route.KeyURL("gateway", 0, broken), "Accept", "application/json")
	// "11 B broken JSON body, no TTL", alerted as not parsing and without
	// a TTL: 11 bytes, checked and not valid, ttl_ms −1.
	var page struct {
		Decoded struct {
			Role  string `json:"role"`
			State struct {
				Bytes   *int64 `json:"bytes"`
				TTLMs   *int64 `json:"ttl_ms"`
				Content string `json:"content"`
				Checked bool   `json:"checked"`
				Valid   *bool  `json:"valid"`
			} `json:"state"`
		} `json:"decoded"`
	}
	if err := json.Unmarshal([]byte(js), &page); err != nil || code != http.StatusOK {
		t.Fatalf("JSON: %d %v %s", code, err, js)
	}
	d := page.Decoded
	if d.Role != "response-cache" || d.State.Bytes == nil || *d.State.Bytes != 11 || d.State.Content != "json" || !d.State.Checked ||
		d.State.Valid == nil || *d.State.Valid || d.State.TTLMs == nil || *d.State.TTLMs != -1 {
		t.Fatalf("broken body: %+v", d)
	}
}
