package action

import (
	"context"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/redisview/schema"
)

// SetBloomBits sets the bloom bits a member of a ban list's exact set
// lacks (support). A name written to the set by hand, without its bits,
// is silently ignored by the application (its bloom says no, so the set
// is never asked); this gives it its bits, and only those that are clear:
// SETBIT of each, in one MULTI, with the member's presence and its bits
// watched (MemberPlan), so a member removed or bits written meanwhile
// refuse it. The audit records the member and its bits as they were;
// undo (admin) clears again the bits it set that no other member of the
// set needs: it reads the set (bans.Needed, SSCAN pages, the set watched
// so a member added before EXEC fails it), since a name banned since may
// share one of them, and clearing it would silently un-ban that name.
//
// It refuses while most members lack bits (guardConsistent): then the
// pack's scheme is suspect, and bits written with it would fix nothing.
type SetBloomBits struct{}

// KindSetBloomBits names it.
const KindSetBloomBits = "set-bloom-bits"

func init() { Register(SetBloomBits{}) }

func (SetBloomBits) Name() string    { return KindSetBloomBits }
func (SetBloomBits) Title() string   { return "Set missing bloom bits" }
func (SetBloomBits) Requires() Level { return Support }
func (SetBloomBits) Args() []Arg {
	return []Arg{{Name: ArgMember, Help: "the member of the ban set whose bloom bits are missing, exactly as stored", Data: true}}
}

// AppliesTo is true for the bloom and the set of a ban list.
func (SetBloomBits) AppliesTo(f *schema.Family) bool { return isBanFamily(f) }

func (k SetBloomBits) Plan(ctx context.Context, env Env, req Request) (Plan, error) {
	if err := checkArgs(req, ArgMember); err != nil {
		return nil, err
	}
	member := req.Args[ArgMember]
	switch {
	case member == "":
		return nil, invalidf("member is required")
	case len(member) > maxKeyBytes:
		return nil, invalidf("member longer than %d bytes", maxKeyBytes)
	}
	l, err := banList(env, k, req)
	if err != nil {
		return nil, err
	}
	if err := guardConsistent(ctx, env, k, l); err != nil {
		return nil, err
	}
	return setBitsPlan{banPlan{list: l, name: member, ban: true, offsets: l.Positions(member)}}, nil
}

// setBitsPlan reads the keys as a ban does (the member in the set, its
// bits in the bloom) and writes only the clear bits.
type setBitsPlan struct{ banPlan }

func (p setBitsPlan) Notes() []string {
	return []string{"Only the bits that are clear are set; the set is not changed. Undo (admin) clears them again, except those another member of the set needs by then (a name banned since may share one): it reads the set to tell, and refuses when the set is too large to read."}
}

func (p setBitsPlan) Describe(states []State) ([]Change, error) {
	set, bloom := states[0], states[1]
	k := SetBloomBits{}
	if set.Exists() && set.Type != "set" {
		return nil, typeMismatch(k, set, p.list.Set)
	}
	if bloom.Exists() && bloom.Type != "string" {
		return nil, typeMismatch(k, bloom, p.list.Bloom)
	}
	name := quoteKey(p.name)
	if set.Member == nil || !set.Member.Present {
		return nil, fmt.Errorf("%w: %s is not in the ban set %s, so it has no ban for bits to carry (Ban… bans it)", ErrNotFound, name, quoteKey(set.Key))
	}
	if !bloom.Exists() {
		return nil, invalidf("the bloom %s does not exist, so every member lacks its bits; an admin must rebuild it from the set", quoteKey(bloom.Key))
	}
	bits := bloom.Member.Bits
	clear := strings.Count(bits, "0")
	if clear == 0 {
		return nil, invalidf("%s has all its %d bloom bits set in %s already: nothing to set", name, len(p.offsets), quoteKey(bloom.Key))
	}
	return []Change{
		{Key: set.Key, Op: "none", After: "with " + name + " (unchanged)", Before: set,
			Text: fmt.Sprintf("%s is in the ban set %s (%s) and stays", name, quoteKey(set.Key), set.Shape())},
		{Key: bloom.Key, Op: "set-bits", After: "bits " + strings.Repeat("1", len(p.offsets)), Before: bloom,
			Text: fmt.Sprintf("SET the %d missing bloom bits of %s in %s (offsets %s: now %s), so that the application finds its ban", clear, name, quoteKey(bloom.Key), offsetsText(p.offsets), bits)},
	}, nil
}

func (p setBitsPlan) Apply(ctx context.Context, tx redis.Pipeliner, states []State) {
	bits := states[1].Member.Bits
	for i, off := range p.offsets {
		if bits[i] == '0' {
			tx.SetBit(ctx, p.list.BloomKey, off, 1)
		}
	}
}

// keepOnUndo: the set was not changed, so undo leaves it.
func (SetBloomBits) keepOnUndo(t Target) string {
	if t.Member != nil && t.Member.Kind == PartSMember {
		return fmt.Sprintf("%s stays in %s: setting its bits did not change the set.", quoteKey(t.Member.Name), quoteKey(t.Key))
	}
	return ""
}
