package handlers

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/keydeck/keydeck/redisview/decode"
	"github.com/keydeck/keydeck/redisview/limits"
	"github.com/keydeck/keydeck/redisview/schema"
	"github.com/keydeck/keydeck/views"
)

// A lock older than the pack's expected hold is held too long; one without
// a TTL is a violation; a family without a hold says so.
func TestLockRowHeldTooLong(t *testing.T) {
	t.Parallel()
	fam := &schema.Family{ID: "job-lock", Role: schema.RoleLock, Type: "string",
		TTL: schema.TTLPolicy{Kind: schema.TTLRequired, Max: 30 * time.Second}, Params: &schema.LockParams{Value: "uuid", Hold: 5 * time.Second}}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name           string
		pttl           time.Duration
		tooLong, noTTL bool
		age            string
	}{
		{"fresh", 28 * time.Second, false, false, "2s"},
		{"held too long", 20 * time.Second, true, false, "10s"},
		{"no TTL", -1, false, true, "unknown (no TTL)"},
	} {
		r := limits.Row{Key: "job:lock:1", Family: fam, ReadAt: t0, PTTL: c.pttl, State: decode.HeldRow{Holder: "5d0c8f5e-8a6b-4f43-9d3c-2f1f3c9b7e21"}}
		row := lockRow("main", &r, r.At(t0), false)
		if row.TooLong != c.tooLong || row.NoTTL != c.noTTL || row.Age != c.age || row.Holder != "5d0c8f5e-8a6b-4f43-9d3c-2f1f3c9b7e21" {
			t.Errorf("%s: %+v", c.name, row)
		}
	}
	if got := holdText(fam); got != "taken with a TTL of up to 30s (age is counted from it); expected hold ≤ 5s" {
		t.Errorf("hold text %q", got)
	}
	fam.Params = &schema.LockParams{Value: "1"}
	if got := holdText(fam); got != "taken with a TTL of up to 30s (age is counted from it); the pack gives no expected hold time" {
		t.Errorf("hold text %q", got)
	}
}

// A lock whose TTL exceeds its family's maximum (SET … 15m on a 15 s
// lock) is flagged on the Locks page like a lock without a TTL.
func TestLockRowTTLAboveMaximum(t *testing.T) {
	t.Parallel()
	fam := &schema.Family{ID: "lock-create", Role: schema.RoleLock, Type: "string",
		TTL: schema.TTLPolicy{Kind: schema.TTLRequired, Max: 15 * time.Second}, Params: &schema.LockParams{Value: "uuid"}}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name string
		pttl time.Duration
		flag string // the violation shown, "" none
		ttl  string
	}{
		{"within its maximum", 10 * time.Second, "", "9s"},
		{"above its maximum", 15 * time.Minute, "TTL 14m 59s above the pack's maximum 15s", ""},
		{"no TTL", -1, "no TTL — never expires", ""},
	} {
		r := limits.Row{Key: "payment:lock:create:x", Family: fam, ReadAt: t0, PTTL: c.pttl, State: decode.HeldRow{Holder: "5d0c8f5e"}}
		row := lockRow("main", &r, r.At(t0.Add(time.Second)), false)
		vm := views.LocksVM{Conn: "main", Groups: []views.LockGroup{{Family: fam.ID, Rows: []views.LockRow{row}}}}
		var buf bytes.Buffer
		if err := views.LocksLive(vm, false).Render(context.Background(), &buf); err != nil {
			t.Fatal(err)
		}
		doc, err := goquery.NewDocumentFromReader(&buf)
		if err != nil {
			t.Fatal(err)
		}
		if got := doc.Find(`[data-testid="lock-violation"]`).Text(); got != c.flag {
			t.Errorf("%s: violation %q, want %q", c.name, got, c.flag)
		}
		if c.flag == "" {
			if got := strings.TrimSpace(doc.Find(`[data-testid="lock-ttl"]`).Text()); got != c.ttl {
				t.Errorf("%s: TTL %q, want %q", c.name, got, c.ttl)
			}
		}
		if got := doc.Find(`[data-testid="lock-row"].bg-rose-50`).Length(); got != boolInt(c.flag != "") {
			t.Errorf("%s: %d rows marked as violations", c.name, got)
		}
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
