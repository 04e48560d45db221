package handlers

import (
	"testing"
	"time"

	"github.com/keydeck/keydeck/redisview/action"
	"github.com/keydeck/keydeck/views/format"
)

// The action package writes TTLs into previews and audit summaries with
// its own formatter (the domain does not import views); pages show the
// same TTLs with format.Duration. A preview saying "TTL 1h" beside a key
// page saying "1h 0m" is the drift this test forbids.
func TestTTLTextAgreesWithActionMessages(t *testing.T) {
	for _, d := range []time.Duration{
		0, time.Millisecond, 850 * time.Millisecond, time.Second, 59 * time.Second,
		time.Minute, 90 * time.Second, time.Hour, time.Hour + 5*time.Second, time.Hour + 30*time.Minute,
		24 * time.Hour, 25 * time.Hour, 47*time.Hour + 59*time.Minute, 48 * time.Hour,
		3*24*time.Hour + 4*time.Hour + 10*time.Minute, 365 * 24 * time.Hour,
	} {
		if got, want := format.Duration(d), action.FormatTTL(d); got != want {
			t.Errorf("%v: format.Duration %q, action.FormatTTL %q", d, got, want)
		}
	}
}
