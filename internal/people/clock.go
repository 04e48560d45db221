package people

import (
	"context"
	"time"

	"github.com/keydeck/keydeck/internal/clock"
)

// Option sets up a SessionStore or a LoginLimiter.
type Option func(*options)

type options struct{ clock clock.Clock }

// WithClock runs the store's cached answers, or the limiter's windows and
// delays, on c (the wall clock without).
func WithClock(c clock.Clock) Option { return func(o *options) { o.clock = c } }

func clockOf(opts []Option) clock.Clock {
	var o options
	for _, f := range opts {
		f(&o)
	}
	return clock.Or(o.clock)
}

// sleeper is clock.Sleep on c, for the limiter's delays.
func sleeper(c clock.Clock) func(context.Context, time.Duration) {
	return func(ctx context.Context, d time.Duration) { clock.Sleep(ctx, c, d) }
}
