package action

import (
	"context"

	"github.com/keydeck/keydeck/redisview/schema"
)

// KindClearFailures names ClearFailures in requests and the audit log.
const KindClearFailures = "clear-failures"

// ClearFailures clears a failure counter — slider CAPTCHA failures, TOTP
// failures, wrong verification codes: a counter or fixed window whose
// pack says it counts failures (params counts: failures) — so a user who
// was refused for failing too often may try again. It deletes the counter
// like Reset limit (which it narrows to such families): previewed with the
// count against the pack's limit, audited, and undoable by admin.
type ClearFailures struct{}

func init() {
	Register(ClearFailures{})
}

func (ClearFailures) Name() string    { return KindClearFailures }
func (ClearFailures) Title() string   { return "Clear failures" }
func (ClearFailures) Requires() Level { return Support }
func (ClearFailures) Args() []Arg     { return nil }

const failureKeys = "failure counters (role counter or counter-window with counts: failures)"

// AppliesTo is true for a counter or fixed window the pack says counts
// failures.
func (ClearFailures) AppliesTo(f *schema.Family) bool {
	if f == nil {
		return false
	}
	switch p := f.Params.(type) {
	case *schema.CounterParams:
		return f.Role == schema.RoleCounter && p.Counts == "failures"
	case *schema.CounterWindowParams:
		return f.Role == schema.RoleCounterWindow && p.Counts == "failures"
	}
	return false
}

func (k ClearFailures) Plan(ctx context.Context, env Env, req Request) (Plan, error) {
	if err := checkArgs(req); err != nil {
		return nil, err
	}
	m, _, err := classify(env, k, req, failureKeys)
	if err != nil {
		return nil, err
	}
	if !k.AppliesTo(m.Family) {
		return nil, notApplicable(k, failureKeys, req.Key, m.Family)
	}
	return ResetLimit{}.Plan(ctx, env, req)
}
