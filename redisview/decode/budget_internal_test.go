package decode

import (
	"testing"

	"github.com/keydeck/keydeck/redisview/schema"
)

// Every role of the budget class says what it shows on the Quotas page,
// and only those do: a new budget role that forgot its registerBudget
// would be walked and shown with no value and no rank.
func TestBudgetRolesRegisterTheirQuotasHook(t *testing.T) {
	for r, rr := range registry {
		budget := rr.class != nil && rr.class(&schema.Family{Role: r}) == ClassBudget
		if budget != IsBudget(r) {
			t.Errorf("role %s: class budget %v, Quotas page hook %v", r, budget, IsBudget(r))
		}
	}
	orders := map[int]schema.Role{}
	for r, b := range budgets {
		if o, dup := orders[b.order]; dup {
			t.Errorf("roles %s and %s share the Quotas page order %d", r, o, b.order)
		}
		orders[b.order] = r
	}
}
