package bulk

import (
	"time"
)

// Expecter is a Kind whose write leaves a key in a state known before it
// runs. The engine records that state's fingerprint with the batch in
// flight, so that after a restart (or an EXEC whose reply was lost) a key
// found in exactly that state is counted as acted on, and any other is
// skipped: it was not written, or was written again since. A kind that is
// not an Expecter (an import) has its in-flight keys reported as
// ReasonUnknown instead.
type Expecter interface {
	// Expect is the state Queue's writes leave it.Key in, from cur, with
	// now Redis's time as Queue sees it; ok false when not known.
	Expect(j Job, it Item, cur State, now time.Time) (after State, ok bool)
}

// ReasonUnknown: the key was in a batch that Keydeck stopped in (or whose
// reply was lost), and its kind cannot tell whether it wrote it.
const ReasonUnknown = "in a batch interrupted mid-way: not known whether it was acted on"

// inFlight is the record of one key of the batch under way.
type inFlight struct {
	prior State  // recorded when the job records priors
	after string // the fingerprint the write leaves; "" not known
}

func encodeInFlight(r inFlight) string {
	return string(appendField(appendField(nil, encodeState(r.prior)), []byte(r.after)))
}

func decodeInFlight(s string) (inFlight, error) {
	f, err := readFields([]byte(s), 2)
	if err != nil {
		return inFlight{}, err
	}
	prior, err := decodeState(f[0])
	if err != nil {
		return inFlight{}, err
	}
	return inFlight{prior: prior, after: string(f[1])}, nil
}

// recovered judges a key found no longer in its counted state (got) that
// an unsettled batch had in flight (raw): acted on only if it is in the
// very state that batch's write leaves, with the prior recorded then.
func (e *Engine) recovered(it Item, got, raw string) result {
	rec, err := decodeInFlight(raw)
	switch {
	case err != nil || rec.after == "":
		return result{skips: []Skip{{Key: it.Key, Reason: ReasonUnknown}}}
	case got == rec.after:
		return result{acted: []Prior{{Key: it.Key, Prior: rec.prior, After: got}}}
	}
	return result{skips: []Skip{{Key: it.Key, Reason: skipReason(it.Print, got)}}}
}

// The built-in kinds' after-states (see their Queue in kinds.go).

func (deleteKind) Expect(Job, Item, State, time.Time) (State, bool) {
	return State{Type: "none", ExpireAt: -2}, true
}

func (expireKind) Expect(j Job, _ Item, cur State, now time.Time) (State, bool) {
	cur.ExpireAt = now.Add(j.Spec.TTL).UnixMilli()
	return cur, true
}

func (persistKind) Expect(_ Job, _ Item, cur State, _ time.Time) (State, bool) {
	cur.ExpireAt = -1
	return cur, true
}

func (undoKind) Expect(_ Job, it Item, _ State, now time.Time) (State, bool) {
	prior, _, err := decodeUndo(it.Payload)
	if err != nil {
		return State{}, false
	}
	if !prior.Exists() {
		return State{Type: "none", ExpireAt: -2}, true
	}
	if prior.ExpireAt >= 0 && prior.ExpireAt <= now.UnixMilli() {
		return State{}, false // skipped, not restored
	}
	return prior, true
}
