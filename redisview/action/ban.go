package action

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/redisview/bans"
	"github.com/keydeck/keydeck/redisview/schema"
)

// Ban adds a name to a ban list (a bloom of purpose ban with its exact
// set, see package bans): SADD to the set and SETBIT of the name's bloom
// positions, in one MULTI. Both keys are acted on by part (MemberPlan):
// the set by the name, the bloom by the name's bits, so the audit records
// the name and its bits, never a DUMP of a 125 KB bloom, and other bans
// written meanwhile do not refuse it.
//
// Undo (admin) takes the name out of the set and leaves its bits: a bit
// may be shared with a name banned since, and clearing it would silently
// unban that one; a bit left set only costs false positives, which the
// set answers.
type Ban struct{}

// Unban removes a name from a ban list's exact set (SREM). Its bloom bits
// stay: the application asks the set after a bloom hit, so a name not in
// the set is not banned whatever its bits say; a bit cannot be cleared
// safely (other names may share it). The cost is a false-positive rate
// that creeps up until the bloom is rebuilt. The bits are read and
// recorded all the same, so that undo (admin) re-adds the name and sets
// them again should they have been cleared.
type Unban struct{}

// RebuildBloom swaps in a bloom rebuilt from its exact set (admin): the
// new bloom is built aside first (bans.BuildAside, at
// "<bloom>:keydeck-rebuild"), then this action RENAMEs it over the live
// one in one MULTI. Both keys are recorded whole (DUMP, or element-wise
// where DUMP is refused), so undo puts the previous bloom back.
type RebuildBloom struct{}

// Names of the ban kinds and their arguments.
const (
	KindBan          = "ban"
	KindUnban        = "unban"
	KindRebuildBloom = "rebuild-bloom"
	ArgName          = "name"
	ArgMembers       = "members"
)

func init() {
	Register(Ban{})
	Register(Unban{})
	Register(RebuildBloom{})
}

// UnbanNote explains why an unban leaves the bits, on its preview.
const UnbanNote = "The name's bloom bits stay set. That is safe: after a bloom hit the application asks the exact set, and a name not in the set is not banned. Clearing a bit is not: other banned names may share it. The cost: every unbanned name's bits raise the bloom's false-positive rate a little (more lookups reach the set) until the bloom is rebuilt from the set."

// BanUndoNote says what undoing a ban does to the bits.
const BanUndoNote = "Undo takes the name out of the ban set and leaves its bloom bits set (another name banned since may share them); the name is not banned, as after an unban."

const banLists = "ban lists (a bloom of purpose ban and its exact set)"

func (Ban) Name() string   { return KindBan }
func (Ban) Title() string  { return "Ban" }
func (Ban) Requires() Role { return Support }
func (Ban) Args() []Arg {
	return []Arg{{Name: ArgName, Help: "the name to ban, exactly as the application sees it", Data: true}}
}

// AppliesTo is true for the bloom and the set of a ban list.
func (Ban) AppliesTo(f *schema.Family) bool { return isBanFamily(f) }

func (Unban) Name() string   { return KindUnban }
func (Unban) Title() string  { return "Unban" }
func (Unban) Requires() Role { return Support }
func (Unban) Args() []Arg {
	return []Arg{{Name: ArgName, Help: "the name to unban, exactly as stored in the ban set", Data: true}}
}

// AppliesTo is true for the bloom and the set of a ban list.
func (Unban) AppliesTo(f *schema.Family) bool { return isBanFamily(f) }

func (RebuildBloom) Name() string   { return KindRebuildBloom }
func (RebuildBloom) Title() string  { return "Rebuild bloom from set" }
func (RebuildBloom) Requires() Role { return Admin }
func (RebuildBloom) Args() []Arg {
	return []Arg{{Name: ArgMembers, Help: "the set's member count the rebuilt bloom was built from"}}
}

// AppliesTo is false: a rebuild is started from the bans page, which
// builds the new bloom aside before the preview.
func (RebuildBloom) AppliesTo(*schema.Family) bool { return false }

// isBanFamily: f is the bloom of a ban list or its exact set.
func isBanFamily(f *schema.Family) bool {
	if f == nil {
		return false
	}
	switch p := f.Params.(type) {
	case *schema.BloomParams:
		return f.Role == schema.RoleBloom && p.Purpose == "ban"
	case *schema.BloomMembersParams:
		if p.Bloom == nil || p.Bloom.Family == nil {
			return false
		}
		bp, ok := p.Bloom.Family.Params.(*schema.BloomParams)
		return ok && bp.Purpose == "ban"
	}
	return false
}

// banList finds the ban list the request's key belongs to.
func banList(env Env, k Kind, req Request) (bans.List, error) {
	m, cls, err := classify(env, k, req, banLists)
	if err != nil {
		return bans.List{}, err
	}
	if !isBanFamily(m.Family) {
		return bans.List{}, notApplicable(k, banLists, req.Key, m.Family)
	}
	l, ok := bans.ForKey(cls.Pack(), req.DB, req.Key)
	if !ok || !l.Bans {
		return bans.List{}, invalidf("%s applies only to %s; %s in database %d is not one", k.Title(), banLists, quoteKey(req.Key), req.DB)
	}
	if l.Sensitive {
		// Its previews would name members the pack says are never shown.
		return bans.List{}, fmt.Errorf("%w: the pack marks %s or %s sensitive; %s does not act on it", ErrForbidden, quoteKey(l.BloomKey), quoteKey(l.SetKey), k.Title())
	}
	return l, nil
}

// guardConsistent refuses while the bloom is known not to match its set:
// the configured scheme is not the application's, so a ban written with
// it would be ignored, and an unban's verdict could not be trusted.
func guardConsistent(ctx context.Context, env Env, k Kind, l bans.List) error {
	bad, examples, err := bans.Inconsistent(ctx, env.Conn, l)
	if err != nil {
		return redisErr("checking the bloom against its set", err)
	}
	if bad {
		who := ""
		if len(examples) > 0 {
			q := make([]string, len(examples))
			for i, e := range examples {
				q[i] = quoteKey(e)
			}
			who = " (" + strings.Join(q, ", ") + ")"
		}
		return invalidf("%s is disabled: members of %s do not have all their bits set in %s%s, so the pack's bloom scheme differs from the application's and a ban written with it would be silently ignored; an admin must resolve it (rebuild the bloom from the set, or fix the pack) first",
			k.Title(), quoteKey(l.SetKey), quoteKey(l.BloomKey), who)
	}
	return nil
}

func nameArg(req Request) (string, error) {
	if err := checkArgs(req, ArgName); err != nil {
		return "", err
	}
	name := req.Args[ArgName]
	switch {
	case name == "":
		return "", invalidf("name is required")
	case len(name) > maxKeyBytes:
		return "", invalidf("name longer than %d bytes", maxKeyBytes)
	}
	return name, nil
}

func (k Ban) Plan(ctx context.Context, env Env, req Request) (Plan, error) {
	return planBan(ctx, env, k, req, true)
}

func (k Unban) Plan(ctx context.Context, env Env, req Request) (Plan, error) {
	return planBan(ctx, env, k, req, false)
}

func planBan(ctx context.Context, env Env, k Kind, req Request, ban bool) (Plan, error) {
	name, err := nameArg(req)
	if err != nil {
		return nil, err
	}
	l, err := banList(env, k, req)
	if err != nil {
		return nil, err
	}
	if err := guardConsistent(ctx, env, k, l); err != nil {
		return nil, err
	}
	return banPlan{list: l, name: name, ban: ban, offsets: l.Positions(name)}, nil
}

type banPlan struct {
	list    bans.List
	name    string
	ban     bool
	offsets []int64
}

func (p banPlan) Keys() []string { return []string{p.list.SetKey, p.list.BloomKey} }

func (p banPlan) Members() map[string]MemberRef {
	return map[string]MemberRef{
		p.list.SetKey:   {Kind: PartSMember, Name: p.name},
		p.list.BloomKey: {Kind: PartBits, Name: p.name, Bits: p.offsets},
	}
}

func (p banPlan) Notes() []string {
	if p.ban {
		return []string{BanUndoNote}
	}
	return []string{UnbanNote}
}

func offsetsText(offs []int64) string {
	s := make([]string, len(offs))
	for i, o := range offs {
		s[i] = strconv.FormatInt(o, 10)
	}
	return strings.Join(s, ", ")
}

func (p banPlan) Describe(states []State) ([]Change, error) {
	set, bloom := states[0], states[1]
	k := Kind(Unban{})
	if p.ban {
		k = Ban{}
	}
	if set.Exists() && set.Type != "set" {
		return nil, typeMismatch(k, set, p.list.Set)
	}
	if bloom.Exists() && bloom.Type != "string" {
		return nil, typeMismatch(k, bloom, p.list.Bloom)
	}
	name := quoteKey(p.name)
	inSet := set.Member != nil && set.Member.Present
	bits := ""
	if bloom.Member != nil {
		bits = bloom.Member.Bits
	}
	hit := bits != "" && strings.Trim(bits, "1") == ""
	if !p.ban {
		if !inSet {
			return nil, fmt.Errorf("%w: %s is not in the ban set %s, so it is not banned (%s)", ErrNotFound, name, quoteKey(set.Key), bans.Words(bans.Decide(hit, false), true))
		}
		return []Change{
			{Key: set.Key, Op: "remove-member", After: fmt.Sprintf("without %s (%d members left)", name, max(set.Size-1, 0)), Before: set,
				Text: fmt.Sprintf("UNBAN %s: remove it from the ban set %s (%s), only if it is still there", name, quoteKey(set.Key), set.Shape())},
			{Key: bloom.Key, Op: "none", After: "bits " + bits + " (unchanged)", Before: bloom,
				Text: fmt.Sprintf("leave its bloom bits in %s as they are (offsets %s: %s)", quoteKey(bloom.Key), offsetsText(p.offsets), bits)},
		}, nil
	}
	if !bloom.Exists() {
		return nil, invalidf("the bloom %s does not exist, so no name is banned through it; an admin must rebuild it from the set first", quoteKey(bloom.Key))
	}
	if inSet && hit {
		return nil, invalidf("%s is banned already: it is in %s and its %d bloom bits are set", name, quoteKey(set.Key), len(p.offsets))
	}
	setText := fmt.Sprintf("BAN %s: add it to the ban set %s (%s)", name, quoteKey(set.Key), set.Shape())
	setOp, setAfter := "add-member", "with "+name
	if inSet {
		setText, setOp, setAfter = fmt.Sprintf("%s is in the ban set %s already", name, quoteKey(set.Key)), "none", "with "+name+" (unchanged)"
	}
	clear := strings.Count(bits, "0")
	return []Change{
		{Key: set.Key, Op: setOp, After: setAfter, Before: set, Text: setText},
		{Key: bloom.Key, Op: "set-bits", After: "bits " + strings.Repeat("1", len(p.offsets)), Before: bloom,
			Text: fmt.Sprintf("and set its %d bloom bits in %s (offsets %s; now %s, %d to set)", len(p.offsets), quoteKey(bloom.Key), offsetsText(p.offsets), bits, clear)},
	}, nil
}

func (p banPlan) Apply(ctx context.Context, tx redis.Pipeliner, _ []State) {
	if !p.ban {
		tx.SRem(ctx, p.list.SetKey, p.name)
		return
	}
	tx.SAdd(ctx, p.list.SetKey, p.name)
	for _, off := range p.offsets {
		tx.SetBit(ctx, p.list.BloomKey, off, 1)
	}
}

// keepOnUndo: undoing a ban leaves the bloom's bits (see Ban).
func (Ban) keepOnUndo(t Target) string {
	if t.Member != nil && t.Member.Kind == PartBits {
		return fmt.Sprintf("The bloom bits of %s in %s stay set: another name banned since may share them, and a bit left set only costs a false positive, which the ban set answers.", quoteKey(t.Member.Name), quoteKey(t.Key))
	}
	return ""
}

// partKeeper is a kind whose undo leaves some of its targets as they are.
type partKeeper interface {
	keepOnUndo(t Target) string // why the target stays, or "" to restore it
}

// keptOnUndo says why undoing an action of kind name leaves target t
// alone, or "" when undo restores it.
func keptOnUndo(kind string, t Target) string {
	registry.Lock()
	defer registry.Unlock()
	for _, k := range registry.kinds {
		if pk, ok := k.(partKeeper); ok && k.Name() == kind {
			return pk.keepOnUndo(t)
		}
	}
	return ""
}

func (k RebuildBloom) Plan(ctx context.Context, env Env, req Request) (Plan, error) {
	if err := checkArgs(req, ArgMembers); err != nil {
		return nil, err
	}
	n, err := strconv.ParseInt(req.Args[ArgMembers], 10, 64)
	if err != nil || n < 0 {
		return nil, invalidf("members must be the member count the bloom was built from")
	}
	l, err := banList(env, k, req)
	if err != nil {
		return nil, err
	}
	if req.Key != l.BloomKey {
		return nil, invalidf("%s acts on the bloom %s, not on %s", k.Title(), quoteKey(l.BloomKey), quoteKey(req.Key))
	}
	// The rebuilt bloom holds the members of the set as it was: a member
	// added since would be silently unbanned by the swap.
	card, err := env.Conn.DB(req.DB).SCard(ctx, l.SetKey).Result()
	if err != nil {
		return nil, redisErr("reading SCARD of "+quoteKey(l.SetKey), err)
	}
	if card != n {
		return nil, invalidf("the set %s has %d members now, not the %d the bloom was rebuilt from: build it again", quoteKey(l.SetKey), card, n)
	}
	return rebuildPlan{list: l, members: n}, nil
}

type rebuildPlan struct {
	list    bans.List
	members int64
}

func (p rebuildPlan) Keys() []string { return []string{p.list.BloomKey, p.list.AsideKey()} }

func (p rebuildPlan) Notes() []string {
	return []string{fmt.Sprintf("The new bloom was built from the %d members of %s with the pack's scheme (%s, %d bits, %d hashes); names not in the set lose their bits, which is what clears the false positives unbans left behind. Undo (admin) puts the previous bloom back.",
		p.members, quoteKey(p.list.SetKey), p.list.Scheme, p.list.Bits, p.list.Hashes)}
}

func (p rebuildPlan) Describe(states []State) ([]Change, error) {
	bloom, aside := states[0], states[1]
	if !aside.Exists() {
		return nil, fmt.Errorf("%w: no rebuilt bloom waits at %s (swapped in already, or never built): build it again", ErrNotFound, quoteKey(aside.Key))
	}
	if aside.Type != "string" {
		return nil, invalidf("%s is a %s, not a rebuilt bloom", quoteKey(aside.Key), aside.Type)
	}
	if bloom.Exists() && bloom.Type != "string" {
		return nil, typeMismatch(RebuildBloom{}, bloom, p.list.Bloom)
	}
	return []Change{
		{Key: bloom.Key, Op: "replace", After: fmt.Sprintf("the bloom rebuilt from %d members (%s)", p.members, aside.Shape()), Before: bloom,
			Text: fmt.Sprintf("REPLACE the bloom %s (%s) with the one rebuilt from the %d members of %s, atomically (RENAME)", quoteKey(bloom.Key), bloom.Shape(), p.members, quoteKey(p.list.SetKey))},
		{Key: aside.Key, Op: "delete", After: "absent (renamed over the bloom)", Before: aside,
			Text: fmt.Sprintf("the rebuilt bloom %s (%s) takes its place", quoteKey(aside.Key), aside.Shape())},
	}, nil
}

func (p rebuildPlan) Apply(ctx context.Context, tx redis.Pipeliner, _ []State) {
	tx.Rename(ctx, p.list.AsideKey(), p.list.BloomKey)
}
