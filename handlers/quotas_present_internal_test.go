package handlers

import (
	"testing"

	"github.com/keydeck/keydeck/redisview/decode"
	"github.com/keydeck/keydeck/redisview/schema"
)

// Every role the Quotas page walks has its presenter there, saying how its
// rows are ordered; no other role has one.
func TestQuotaPresentersCoverBudgetRoles(t *testing.T) {
	t.Parallel()
	for _, r := range schema.Roles() {
		p, ok := quotaPresenters[r]
		if ok != decode.IsBudget(r) {
			t.Errorf("role %s: walked on the Quotas page %v, presenter %v", r, decode.IsBudget(r), ok)
		}
		if ok && (p.row == nil || p.order == "") {
			t.Errorf("role %s: presenter without a row or an order", r)
		}
	}
}
