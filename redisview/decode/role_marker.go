package decode

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/keydeck/keydeck/redisview/schema"
)

// Marker is a key whose existence is the meaning (an idempotency mark, a
// used nonce): the value as written, and how long it is kept.
type Marker struct {
	Value string
	TTL   time.Duration
	// At is the value read as a Unix time (s or ms) when it is one within
	// a few years of now; zero otherwise.
	At time.Time
}

func init() {
	read := smallReader(func(in *Input, s string, d time.Duration) (any, error) {
		return &Marker{Value: s, TTL: d, At: EpochNear(s, in.Now)}, nil
	})
	register(schema.RoleIdempotency, nil, read)
	register(schema.RoleNonce, nil, read)
}

// EpochNear reads s as a Unix time in seconds or milliseconds when it is
// one within ten years of now (a bare "1" is not a time); zero otherwise.
func EpochNear(s string, now time.Time) time.Time {
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil || n <= 0 {
		return time.Time{}
	}
	const span = 10 * 365 * 24 * time.Hour
	near := func(t time.Time) bool { d := t.Sub(now); return d < span && d > -span }
	if t := time.UnixMilli(n); near(t) {
		return t.UTC()
	}
	if n < math.MaxInt64/1000 {
		if t := time.Unix(n, 0); near(t) {
			return t.UTC()
		}
	}
	return time.Time{}
}
