package action

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/redisview/bans"
	"github.com/keydeck/keydeck/redisview/schema"
	"github.com/keydeck/keydeck/views/format"
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

// RebuildBloom replaces a bloom with one rebuilt from its exact set
// (admin). Nothing is written before the confirmation: the preview reads
// the set (SSCAN in pages) and computes the new bitmap in memory
// (bans.Build; 1,000,003 bits are 125 KB), and the confirmation computes
// it again — with the set and the bloom WATCHed — and writes it in one
// SET inside the MULTI that records it, only if it is byte for byte the
// bitmap previewed (its digest travels in the confirmation). So a member
// added after the preview refuses the confirmation, and one added between
// that scan and EXEC makes EXEC fail: no ban is silently dropped by the
// swap. Recomputing, rather than carrying 125 KB in the confirmation,
// keeps the token small and the bitmap written one Keydeck computed. The
// previous bloom is recorded whole (DUMP, or element-wise where DUMP is
// refused), so undo puts it back.
type RebuildBloom struct{}

// Names of the ban kinds and their arguments.
const (
	KindBan          = "ban"
	KindUnban        = "unban"
	KindRebuildBloom = "rebuild-bloom"
	ArgName          = "name"
	ArgMembers       = "members"
	ArgDigest        = "digest"
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

func (Ban) Name() string    { return KindBan }
func (Ban) Title() string   { return "Ban" }
func (Ban) Requires() Level { return Support }
func (Ban) Args() []Arg {
	return []Arg{{Name: ArgName, Help: "the name to ban, exactly as the application sees it", Data: true}}
}

// AppliesTo is true for the bloom and the set of a ban list.
func (Ban) AppliesTo(f *schema.Family) bool { return isBanFamily(f) }

func (Unban) Name() string    { return KindUnban }
func (Unban) Title() string   { return "Unban" }
func (Unban) Requires() Level { return Support }
func (Unban) Args() []Arg {
	return []Arg{{Name: ArgName, Help: "the name to unban, exactly as stored in the ban set", Data: true}}
}

// AppliesTo is true for the bloom and the set of a ban list.
func (Unban) AppliesTo(f *schema.Family) bool { return isBanFamily(f) }

func (RebuildBloom) Name() string    { return KindRebuildBloom }
func (RebuildBloom) Title() string   { return "Rebuild bloom from set" }
func (RebuildBloom) Requires() Level { return Admin }
func (RebuildBloom) Args() []Arg {
	return []Arg{
		{Name: ArgMembers, Help: "set by the preview: the set's member count the new bloom is built from"},
		{Name: ArgDigest, Help: "set by the preview: the SHA-256 of the new bloom, which the confirmation must build again"},
	}
}

// AppliesTo is false: a rebuild is started from the bans page.
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

// guardConsistent refuses while most members of the set are known to lack
// bloom bits (bans.Mismatch.Widespread): the configured scheme is then
// not the application's, so bits written with it would be ignored, and a
// verdict could not be trusted. A few members lacking bits (written to
// the set by hand) refuse only the actions on those names (see
// missedErr): ban and unban of every other name go on.
func guardConsistent(ctx context.Context, env Env, k Kind, l bans.List) error {
	m, err := bans.Judge(ctx, env.Conn, l)
	if err != nil {
		return redisErr("checking the bloom against its set", err)
	}
	if m.Widespread {
		who := ""
		if len(m.Examples) > 0 {
			q := make([]string, len(m.Examples))
			for i, e := range m.Examples {
				q[i] = quoteKey(e)
			}
			who = " (" + strings.Join(q, ", ") + ")"
		}
		return invalidf("%s is disabled: most members of %s do not have all their bits set in %s%s, so the pack's bloom scheme differs from the application's and bits written with it would be silently ignored; an admin must resolve it (rebuild the bloom from the set, or fix the pack) first",
			k.Title(), quoteKey(l.SetKey), quoteKey(l.BloomKey), who)
	}
	return nil
}

// missedErr refuses to ban or unban a name that is in the ban set without
// all its bloom bits: the application never asks the set for it, so its
// ban is ignored today, and neither action would say what it does.
func missedErr(k Kind, name, set, bloom string, offs []int64, bits string) error {
	return invalidf("%s of %s is refused: it is in the ban set %s but %d of its bloom bits in %s are clear (offsets %s: %s), so the application never asks the set for it and its ban is silently ignored. Fix that first with %s (support, on the Bans page or the user page), then %s it if need be",
		k.Title(), quoteKey(name), quoteKey(set), strings.Count(bits, "0"), quoteKey(bloom), offsetsText(offs), bits, SetBloomBits{}.Title(), strings.ToLower(k.Title()))
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
	if inSet && !hit && (bloom.Exists() || !p.ban) {
		return nil, missedErr(k, p.name, set.Key, bloom.Key, p.offsets, bits)
	}
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
	if err := checkArgs(req, ArgMembers, ArgDigest); err != nil {
		return nil, err
	}
	// Both are the preview's own words, taken exactly: a count with a space
	// around it, or a digest not in the preview's form, is not one.
	if m, ok := req.Args[ArgMembers]; ok && !isDigits(m) {
		return nil, invalidf("members: %q is not a member count (decimal digits)", m)
	}
	if d, ok := req.Args[ArgDigest]; ok && !isSHA256Hex(d) {
		return nil, invalidf("digest: %q is not the preview's digest (64 lowercase hex digits)", d)
	}
	l, err := banList(env, k, req)
	if err != nil {
		return nil, err
	}
	if req.Key != l.BloomKey {
		return nil, invalidf("%s acts on the bloom %s, not on %s", k.Title(), quoteKey(l.BloomKey), quoteKey(req.Key))
	}
	return &rebuildPlan{list: l, want: req.Args[ArgDigest], wantMembers: req.Args[ArgMembers]}, nil
}

// rebuildPlan writes the bloom only; the set is watched and read
// (prepare), never recorded: it may be of any size.
type rebuildPlan struct {
	list        bans.List
	want        string // the previewed bitmap's digest ("" when previewing)
	wantMembers string
	built       bans.Built
}

func (p *rebuildPlan) Keys() []string    { return []string{p.list.BloomKey} }
func (p *rebuildPlan) watched() []string { return []string{p.list.SetKey} }

func (p *rebuildPlan) prepare(ctx context.Context, c redis.Cmdable) error {
	set := quoteKey(p.list.SetKey)
	b, err := bans.Build(ctx, c, p.list)
	switch {
	case errors.Is(err, bans.ErrSetChanged):
		return fmt.Errorf("%w: members of %s came or went while it was read (%v); nothing was written, preview again", ErrChanged, set, err)
	case errors.Is(err, bans.ErrTooLarge):
		return invalidf("%s: %v", RebuildBloom{}.Title(), err)
	case err != nil:
		return redisf("rebuilding the bloom from %s: %v", set, err)
	}
	if p.want != "" && b.Digest() != p.want {
		then := p.wantMembers
		if then == "" {
			then = "?"
		}
		return fmt.Errorf("%w: the set %s changed since the preview (%s members then, %d now), so the bloom built from it now is not the one previewed; nothing was written, preview again", ErrChanged, set, then, b.Members)
	}
	p.built = b
	return nil
}

// previewArgs carries the previewed bitmap's digest (and its member count,
// for people) to the confirmation.
func (p *rebuildPlan) previewArgs(args map[string]string) map[string]string {
	out := map[string]string{}
	maps.Copy(out, args)
	out[ArgMembers] = strconv.FormatInt(p.built.Members, 10)
	out[ArgDigest] = p.built.Digest()
	return out
}

func (p *rebuildPlan) Notes() []string {
	return []string{
		fmt.Sprintf("The new bloom was computed in memory from the %d members of %s with the pack's scheme (%s, %d bits, %d hashes); nothing has been written. Names not in the set lose their bits, which is what clears the false positives unbans left behind; members that lacked bits get them.",
			p.built.Members, quoteKey(p.list.SetKey), p.list.Scheme, p.list.Bits, p.list.Hashes),
		"At the confirmation the set is read again with the set and the bloom watched: if it no longer gives this very bloom, or either key changes before the write, nothing is written. Undo (admin) puts the previous bloom back (recorded whole in the audit log).",
	}
}

func (p *rebuildPlan) Describe(states []State) ([]Change, error) {
	bloom := states[0]
	if bloom.Exists() && bloom.Type != "string" {
		return nil, typeMismatch(RebuildBloom{}, bloom, p.list.Bloom)
	}
	size := format.Bytes(int64(len(p.built.Bitmap)))
	return []Change{{Key: bloom.Key, Op: "replace", Before: bloom,
		After: fmt.Sprintf("the bloom rebuilt from %d members (%s, %d bits set)", p.built.Members, size, p.built.SetBits),
		Text: fmt.Sprintf("REPLACE the bloom %s (%s) with the one rebuilt from the %d members of %s (%s, %d bits set), in one SET (its TTL, if any, kept)",
			quoteKey(bloom.Key), bloom.Shape(), p.built.Members, quoteKey(p.list.SetKey), size, p.built.SetBits)}}, nil
}

func (p *rebuildPlan) Apply(ctx context.Context, tx redis.Pipeliner, states []State) {
	if states[0].PTTL >= 0 {
		// Its TTL stays (KEEPTTL, Redis 6+); a bloom without one, the
		// usual case, is written with a plain SET that any server takes.
		tx.SetArgs(ctx, p.list.BloomKey, p.built.Bitmap, redis.SetArgs{KeepTTL: true})
		return
	}
	tx.Set(ctx, p.list.BloomKey, p.built.Bitmap, 0)
}

// isDigits: s is one or more ASCII decimal digits, nothing around them.
func isDigits(s string) bool {
	if s == "" || len(s) > 19 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// isSHA256Hex: s is a SHA-256 written as Built.Digest writes it.
func isSHA256Hex(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !('0' <= s[i] && s[i] <= '9' || 'a' <= s[i] && s[i] <= 'f') {
			return false
		}
	}
	return true
}
