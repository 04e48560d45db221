package handlers

import (
	"context"
	"errors"
	"math"
	"time"
)

// consoleBudgetWait is how long a console command waits for its share of
// the connection's request budget before it is refused as busy: a person
// looping commands (or a script posting them) is paced by the budget the
// searches and the user page draw from, shared fairly between identities.
const consoleBudgetWait = time.Second

// consoleTake takes cost units of conn's budget for who, waiting at most
// consoleBudgetWait. ok false: the budget is spent; secs is when to try
// again. A connection without a budget is not paced.
func (a *App) consoleTake(ctx context.Context, conn, who string, cost int64) (secs int, ok bool) {
	b := a.scanBudgets[conn]
	if b == nil {
		return 0, true
	}
	wctx, cancel := context.WithTimeout(ctx, consoleBudgetWait)
	defer cancel()
	err := b.Take(wctx, who, cost)
	if err == nil || !errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil {
		return 0, err == nil
	}
	st := b.Stats()
	// This take's time at the budget's rate, behind every identity waiting.
	wait := float64(cost) / st.Rate * float64(st.Identities+1)
	return max(1, int(math.Ceil(wait))), false
}
