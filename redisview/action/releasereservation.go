package action

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/redisview/decode"
	"github.com/keydeck/keydeck/redisview/schema"
	"github.com/keydeck/keydeck/views/format"
)

// KindReleaseReservation names ReleaseReservation in requests and the
// audit log.
const KindReleaseReservation = "release-reservation"

// ReleaseReservation deletes an orphaned gateway reservation
// (q:reserved:{requestId}): one whose request id is in no concurrency set
// (q:conc:{keyId}) and that is older than decode.ReservationLifetime, or
// has no TTL (see decode/orphan.go). Its amount is then no longer held.
//
// The reservation names only its request id, so the plan's keys are the
// reservation and every concurrency set of the database (found by a
// bounded SCAN, at most decode.MaxConcurrencySets): all are WATCHed and
// fingerprinted, and Describe re-checks under
// WATCH that no set holds the id and that the reservation is overdue. Each
// set's state is only the id's membership (MemberPlan), so requests
// starting and ending in the sets meanwhile do not refuse; the id joining
// a set since the preview does (ErrChanged). The preview's sets travel to
// the confirm step (ArgSets), since sets come and go with their keys'
// requests; a set created since is looked in at confirmation, without
// WATCH (a request id joins its set once, when its request starts, and a
// request that started more than a minute ago is no new set's member). When the database has more sets than the bound, or the SCAN does
// not finish within its bound, it refuses: orphaned cannot be proved.
//
// Undo restores the reservation with the TTL it had left; the sets were
// only read and stay as they are.
type ReleaseReservation struct{}

func init() {
	Register(ReleaseReservation{})
}

func (ReleaseReservation) Name() string    { return KindReleaseReservation }
func (ReleaseReservation) Title() string   { return "Release orphaned reservation" }
func (ReleaseReservation) Requires() Level { return Admin }
func (ReleaseReservation) Args() []Arg     { return nil }

const reservationKeys = "reservations (role reservation) named by a request id, in a pack with concurrency sets"

// AppliesTo is true for a reservation family of one placeholder.
func (ReleaseReservation) AppliesTo(f *schema.Family) bool {
	return f != nil && f.Role == schema.RoleReservation && len(f.Pattern.Placeholders()) == 1
}

// ArgSets carries the concurrency sets a preview found (a JSON list of
// key names) to the confirm step, which re-checks exactly those under
// WATCH; the preview adds it (argPlan).
const ArgSets = "sets"

func (k ReleaseReservation) Plan(ctx context.Context, env Env, req Request) (Plan, error) {
	if err := checkArgs(req, ArgSets); err != nil {
		return nil, err
	}
	m, cls, err := classify(env, k, req, reservationKeys)
	if err != nil {
		return nil, err
	}
	if !k.AppliesTo(m.Family) {
		return nil, notApplicable(k, reservationKeys, req.Key, m.Family)
	}
	id, _ := decode.RequestID(m)
	pack := cls.Pack()
	if len(decode.ConcurrencyFamilies(pack, req.DB)) == 0 {
		return nil, invalidf("%s: pack %s has no concurrency-set family in database %d, so no set says whether request %q is in flight", k.Title(), pack.Name, req.DB, id)
	}
	c := env.Conn.DB(req.DB)
	found, complete, err := decode.FindConcurrencySets(ctx, c, pack, req.DB)
	if err != nil {
		return nil, redisErr("finding the concurrency sets", err)
	}
	if !complete {
		return nil, invalidf("%s: database %d has more than %d concurrency sets, or more keys than a SCAN of %d calls of COUNT %d reaches; whether request %q is in one is not known, so %s is not released",
			k.Title(), req.DB, decode.MaxConcurrencySets, decode.ScanCalls, decode.ScanCount, id, quoteKey(req.Key))
	}
	slices.Sort(found)
	p := releasePlan{key: req.Key, fam: m.Family, id: id, sets: found}
	given, ok := req.Args[ArgSets]
	if !ok {
		return p, nil
	}
	// The confirm step: the sets previewed are the plan's keys; a set
	// created since (an in-flight key's set comes and goes with its
	// requests) is looked in now, without WATCH.
	p.given = true
	p.sets = nil // found stays as found: Unmarshal would reuse its array
	if err := json.Unmarshal([]byte(given), &p.sets); err != nil || len(p.sets) > decode.MaxConcurrencySets {
		return nil, invalidf("%s must be a JSON list of at most %d concurrency sets", ArgSets, decode.MaxConcurrencySets)
	}
	for _, s := range p.sets {
		if sm, ok := cls.Match(req.DB, s); !ok || sm.Family.Role != schema.RoleConcurrencySet {
			return nil, invalidf("%s is not a concurrency set of pack %s", quoteKey(s), pack.Name)
		}
	}
	var extra []string
	for _, s := range found {
		if !slices.Contains(p.sets, s) {
			extra = append(extra, s)
		}
	}
	in, err := decode.InSets(ctx, c, extra, []string{id})
	if err != nil {
		return nil, redisErr("looking in the concurrency sets", err)
	}
	if s := in[id]; s != "" {
		return nil, fmt.Errorf("%w: request %q is now in concurrency set %s, created since the preview: the reservation is in flight", ErrChanged, id, quoteKey(s))
	}
	return p, nil
}

type releasePlan struct {
	key   string
	fam   *schema.Family
	id    string
	sets  []string
	given bool // the sets came from the preview (ArgSets)
}

// previewArgs carries the sets found to the confirm step.
func (p releasePlan) previewArgs(args map[string]string) map[string]string {
	if p.given {
		return args
	}
	b, _ := json.Marshal(p.sets)
	out := maps.Clone(args)
	if out == nil {
		out = map[string]string{}
	}
	out[ArgSets] = string(b)
	return out
}

func (p releasePlan) Keys() []string { return append([]string{p.key}, p.sets...) }

// Members makes each set's state the request id's membership (SISMEMBER):
// another request starting or ending in a set is no change (the Runner
// retries when it aborts EXEC), the id joining one is.
func (p releasePlan) Members() map[string]MemberRef {
	out := make(map[string]MemberRef, len(p.sets))
	for _, k := range p.sets {
		out[k] = MemberRef{Kind: PartSMember, Name: p.id}
	}
	return out
}

func (p releasePlan) Notes() []string {
	return []string{fmt.Sprintf("Request %q was looked for in the %d concurrency sets of the database: the release re-checks each under WATCH, and refuses if the request joined one since this preview; a set created since is looked in when confirming. Undo restores the reservation only.", p.id, len(p.sets))}
}

func (p releasePlan) Describe(states []State) ([]Change, error) {
	s := states[0]
	if !s.Exists() {
		return nil, fmt.Errorf("%w: reservation %s is gone (reconciled or expired)", ErrNotFound, quoteKey(s.Key))
	}
	if p.fam.TypeViolation(s.Type) != "" {
		return nil, typeMismatch(ReleaseReservation{}, s, p.fam)
	}
	pttl, _ := s.TTL()
	if s.PTTL < 0 {
		pttl = -1
	}
	if !decode.Overdue(p.fam, pttl) {
		age, _ := decode.ReservationAge(p.fam, pttl)
		return nil, invalidf("reservation %s is not orphaned: it is %s old (from its TTL), younger than a request's expected lifetime of %s",
			quoteKey(s.Key), format.Duration(age), format.Duration(decode.ReservationLifetime))
	}
	out := make([]Change, len(states))
	for i, st := range states[1:] {
		if st.Member != nil && st.Member.Present {
			return nil, invalidf("reservation %s is not orphaned: request %q is in concurrency set %s, so it is in flight", quoteKey(s.Key), p.id, quoteKey(st.Key))
		}
		if st.Member == nil {
			return nil, invalidf("concurrency set %s was not read as a set (%s), so whether it holds request %q is not known", quoteKey(st.Key), st.Shape(), p.id)
		}
		out[i+1] = Change{Key: st.Key, Op: "none", After: st.Shape() + " (unchanged)", Before: st,
			Text: fmt.Sprintf("%s does not hold request %q (read, watched, left as is)", quoteKey(st.Key), p.id)}
	}
	age := "no TTL: it never expires"
	if a, ok := decode.ReservationAge(p.fam, pttl); ok {
		age = "about " + format.Duration(a) + " old"
	}
	out[0] = Change{Key: s.Key, Op: "delete", After: "absent", Before: s,
		Text: fmt.Sprintf("RELEASE RESERVATION %s (family %s, reserved %q; %s; %s): request %q is in none of the %d concurrency sets",
			quoteKey(s.Key), p.fam.ID, s.Excerpt, age, s.Shape(), p.id, len(p.sets))}
	return out, nil
}

func (p releasePlan) Apply(ctx context.Context, tx redis.Pipeliner, _ []State) {
	tx.Del(ctx, p.key)
}

// keepOnUndo: undo restores the reservation only; the concurrency sets
// were read, not changed, and putting back an old copy of one would
// discard the requests that started or finished since.
func (ReleaseReservation) keepOnUndo(t Target) string {
	if t.Type == "string" {
		return ""
	}
	return fmt.Sprintf("The concurrency set %s stays as it is: the release only read it.", quoteKey(t.Key))
}
