package handlers

import (
	"testing"
	"time"

	"github.com/keydeck/keydeck/redisview"
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

// redisview.FormatBytes writes sizes into action messages ("larger than
// 1.0 MiB"); pages use format.Bytes. They agree except where FormatBytes
// would say "1024.0 KiB" and format.Bytes moves up a unit.
func TestByteTextAgreesWithDomainMessages(t *testing.T) {
	for _, n := range []int64{0, 1, 1023, 1024, 1536, 64 << 10, 5 << 20, 3 << 30, 1 << 40} {
		if got, want := format.Bytes(n), redisview.FormatBytes(n); got != want {
			t.Errorf("%d: format.Bytes %q, redisview.FormatBytes %q", n, got, want)
		}
	}
}
