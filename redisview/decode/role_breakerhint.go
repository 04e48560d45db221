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

func init() {
	registerBudget(schema.RoleBreakerHint, budgetRole{order: 4, fill: fillBreakerHint, rank: rankBreakerHint})
}

func fillBreakerHint(b *Budget, r BudgetRead) string {
	b.State, b.Open = r.Value, strings.EqualFold(r.Value, "open")
	return ""
}

// rankBreakerHint puts open breakers first, the longest to last first.
func rankBreakerHint(b *Budget, ttl time.Duration) float64 {
	if b.Open {
		return 1e12 + ttl.Seconds()
	}
	return ttl.Seconds()
}
