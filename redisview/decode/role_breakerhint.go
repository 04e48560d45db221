package decode

import (
	"strings"
	"time"

	"github.com/keydeck/keydeck/redisview/schema"
)

// BreakerHint is an advisory circuit-breaker marker: a replica opened its
// breaker (the gateway seed: written on a local OPEN transition, read by
// the other replicas to open theirs faster, never to close one).
type BreakerHint struct {
	State string // the marker as written ("open")
	Open  bool   // the marker says open
	TTL   time.Duration
}

func init() {
	register(schema.RoleBreakerHint, always(ClassBudget), smallReader(func(_ *Input, s string, d time.Duration) (any, error) {
		return &BreakerHint{State: s, Open: strings.EqualFold(strings.TrimSpace(s), "open"), TTL: d}, nil
	}))
}
