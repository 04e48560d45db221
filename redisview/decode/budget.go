package decode

import (
	"math"
	"time"

	"github.com/keydeck/keydeck/redisview/schema"
)

// Budget is one key of a budget role as the Quotas page's walk reads it:
// numbers and the value as written, no text for people. Each budget role
// fills the part that is its own (registerBudget); the walk adds the
// orphan checks, which join reservations to concurrency sets.
type Budget struct {
	// quota and concurrency-set: Used of Limit (0: no limit in the pack).
	Used, Limit int64
	Percent     float64 // Used / Limit × 100; meaningful when Limit > 0
	Unit        string
	ResetsAt    time.Time // quota: the next period boundary
	// Period is the quota's period as its key names it (202612), when the
	// pattern has a yyyyMM (or yyyyMMdd) placeholder; Past: an earlier
	// period than now's, a record rather than a live budget.
	Period string
	Past   bool

	// balance and reservation: the amount as written; config: the value.
	Amount string
	// reservation: NoTTL is the role's violation; Age derived from the
	// pack's TTL maximum minus the TTL left (0 when unknown).
	NoTTL bool
	Age   time.Duration
	// The orphan check (orphan.go), against the concurrency sets the walk
	// knows: SetsChecked were looked in, SetsComplete when they are every
	// set of the database (within MaxConcurrencySets), InSet names the set
	// holding the request id. Overdue: older than ReservationLifetime, or
	// no TTL. Orphaned: overdue and in none of every set. SetsKnown: the
	// check ran for this row.
	SetsKnown    bool
	SetsChecked  int
	SetsComplete bool
	InSet        string
	Overdue      bool
	Orphaned     bool
	// SetsSensitive: a concurrency family is sensitive, so its sets are
	// never looked in and whether the reservation is orphaned is hidden.
	SetsSensitive bool

	// concurrency-set: the members read and those whose reservation is gone.
	Checked  int
	Orphans  []string
	MoreMems bool // the set holds members that were not checked

	// breaker-hint
	State string
	Open  bool
}

// BudgetRead is what the walk read of one key for its role: a string
// role's value (trimmed, at most a few hundred bytes) or a set role's
// SCARD, and the TTL (-1: none).
type BudgetRead struct {
	Match schema.Match
	Value string
	Card  int64
	TTL   time.Duration
	Now   time.Time
}

// budgetRole is what a budget role contributes to the Quotas page.
type budgetRole struct {
	// order places its families among those equally used: budgets before
	// what spends them, hints last.
	order int
	// set: its keys are sets, counted with SCARD (and one SSCAN page of
	// members checked for their reservation), not short strings.
	set bool
	// fill sets b from what was read, or says why a value that breaks
	// the role was not decoded (the row's note).
	fill func(b *Budget, r BudgetRead) (note string)
	// rank: the higher, the nearer to a problem (ttl is the row's).
	rank func(b *Budget, ttl time.Duration) float64
}

var budgets = map[schema.Role]budgetRole{}

// registerBudget adds what role r shows on the Quotas page; each budget
// role's file calls it from its init.
func registerBudget(r schema.Role, b budgetRole) {
	if _, dup := budgets[r]; dup {
		panic("decode: budget role " + string(r) + " registered twice")
	}
	budgets[r] = b
}

// IsBudget reports a role the Quotas page walks.
func IsBudget(r schema.Role) bool {
	_, ok := budgets[r]
	return ok
}

// BudgetOrder places role r's families among equally used ones (lower
// first); a role that is no budget comes last.
func BudgetOrder(r schema.Role) int {
	if b, ok := budgets[r]; ok {
		return b.order
	}
	return math.MaxInt
}

// BudgetIsSet reports a budget role whose keys are sets (read with SCARD).
func BudgetIsSet(r schema.Role) bool { return budgets[r].set }

// FillBudget sets b from what was read of a key of a budget role. note
// says why the value was not decoded ("" when it was); a role that is no
// budget leaves b unset.
func FillBudget(b *Budget, r BudgetRead) (note string) {
	br, ok := budgets[r.Match.Family.Role]
	if !ok || br.fill == nil {
		return ""
	}
	return br.fill(b, r)
}

// BudgetRank is how near to a problem b is, among rows of its role's
// family: the higher, the nearer.
func BudgetRank(r schema.Role, b *Budget, ttl time.Duration) float64 {
	if br, ok := budgets[r]; ok && br.rank != nil {
		return br.rank(b, ttl)
	}
	return 0
}

// rankUsed ranks a budget used against a limit (a quota, a concurrency
// set): this period's before past ones, the most used share first, or the
// most used (and members without a reservation) when no limit is known.
func rankUsed(b *Budget, _ time.Duration) float64 {
	past := 0.0
	if b.Past {
		past = -1e15 // this period's budgets before past ones
	}
	if b.Limit > 0 {
		return past + b.Percent
	}
	return past + float64(b.Used) + float64(len(b.Orphans))*1e12
}
