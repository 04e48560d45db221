package action

import "sync"

// tally counts the outcomes this process recorded, by kind and outcome:
// kinds are the registered ones and outcomes OutcomeOK, OutcomeFailed,
// OutcomeRefused and OutcomeUnknown, so the table stays small.
type tally struct {
	mu sync.Mutex
	n  map[KindOutcome]int64
}

// KindOutcome is one row of Tally.
type KindOutcome struct{ Kind, Outcome string }

func (t *tally) add(kind, outcome string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.n == nil {
		t.n = map[KindOutcome]int64{}
	}
	t.n[KindOutcome{kind, outcome}]++
}

// Tally is how many actions this runner settled since it started, by kind
// and outcome (an unknown kind's name is never counted). In memory only.
func (r *Runner) Tally() map[KindOutcome]int64 {
	r.tally.mu.Lock()
	defer r.tally.mu.Unlock()
	out := make(map[KindOutcome]int64, len(r.tally.n))
	for k, v := range r.tally.n {
		out[k] = v
	}
	return out
}
