package action

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/redisview/schema"
)

// RemoveLeaderboardEntry removes one entry from a leaderboard (a key of
// role leaderboard): the member from the sorted set, and the companion keys
// the pack names for it (LeaderboardParams: the row's metadata hash and
// its cached high score), in one transaction. Support staff use it to take
// a cheater off the board.
//
// The sorted set is acted on by member (MemberPlan): the preview shows and
// fingerprints the member's rank and score only, so a live board taking
// other scores between preview and confirm does not refuse the action,
// while a new score for this member does (ErrChanged). The audit intent
// records the member and its score, not a DUMP of the board, and the
// companion keys' DUMP and TTL as usual; undo (admin) adds the member back
// with its score and restores the companions, each only if still absent.
//
// The application may rebuild the board from its database on a cache
// miss, so the preview reminds that the row must go there too.
type RemoveLeaderboardEntry struct{}

func init() {
	Register(RemoveLeaderboardEntry{})
}

func (RemoveLeaderboardEntry) Name() string    { return KindRemoveLeaderboardEntry }
func (RemoveLeaderboardEntry) Title() string   { return "Remove leaderboard entry" }
func (RemoveLeaderboardEntry) Requires() Level { return Support }
func (RemoveLeaderboardEntry) Args() []Arg {
	return []Arg{{Name: ArgMember, Help: "the member to remove, exactly as stored in the sorted set (a user id)", Data: true}}
}

const leaderboardKeys = "leaderboards (role leaderboard)"

// ColdStartNote is the preview's reminder that removing the cache is not
// removing the row.
const ColdStartNote = "The application may rebuild this leaderboard from its database on a cache miss (cold start); remove the row there too, or it can come back."

// AppliesTo is true for role leaderboard.
func (RemoveLeaderboardEntry) AppliesTo(f *schema.Family) bool {
	return f != nil && f.Role == schema.RoleLeaderboard
}

func (k RemoveLeaderboardEntry) Plan(_ context.Context, env Env, req Request) (Plan, error) {
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
	m, cls, err := classify(env, k, req, leaderboardKeys)
	if err != nil {
		return nil, err
	}
	if !k.AppliesTo(m.Family) {
		return nil, notApplicable(k, leaderboardKeys, req.Key, m.Family)
	}
	p := &entryPlan{board: req.Key, fam: m.Family, member: MemberRef{Name: member, Desc: true}}
	params, _ := m.Family.Params.(*schema.LeaderboardParams)
	if params == nil {
		return p, nil
	}
	p.member.Desc = params.Order != "asc"
	vars := m.Map()
	if params.Member != "" {
		vars[params.Member] = member
	}
	// A member of a sensitive board is data: the errors below name
	// neither it nor a key built from it (see namedPlan).
	who, would := "member "+quoteKey(member), func(key string) string { return " would be " + quoteKey(key) + ", which is" }
	if m.Family.Sensitive {
		who, would = "the member named", func(string) string { return " is" }
	}
	for _, c := range []struct {
		what string
		ref  *schema.Ref
	}{{"metadata", params.Meta}, {"high score", params.HighScore}} {
		if c.ref == nil || c.ref.Family == nil {
			continue
		}
		key, err := c.ref.Key(vars)
		if err != nil {
			why := " (" + err.Error() + ")" // it quotes the offending byte
			if m.Family.Sensitive {
				why = ""
			}
			return nil, invalidf("the %s key of %s of %s cannot be built from %q%s, so the entry cannot be removed whole",
				c.what, who, quoteKey(req.Key), c.ref.String(), why)
		}
		// Only a key the pack places in the companion's family: the name
		// is built from attacker-chosen text.
		if got, ok := cls.Classify(req.DB, key); !ok || got != c.ref.Family {
			return nil, invalidf("the %s key of %s%s not of family %s in database %d, so the entry cannot be removed whole",
				c.what, who, would(key), c.ref.Family.ID, req.DB)
		}
		p.companions = append(p.companions, companion{key: key, what: c.what, fam: c.ref.Family})
	}
	return p, nil
}

type companion struct {
	key  string
	what string // "metadata", "high score"
	fam  *schema.Family
}

type entryPlan struct {
	board      string
	fam        *schema.Family
	member     MemberRef
	companions []companion
}

func (p *entryPlan) Keys() []string {
	out := []string{p.board}
	for _, c := range p.companions {
		out = append(out, c.key)
	}
	return out
}

func (p *entryPlan) Members() map[string]MemberRef { return map[string]MemberRef{p.board: p.member} }

// namedAfter: the companions' names carry the member.
func (p *entryPlan) namedAfter() []namedKey {
	out := make([]namedKey, len(p.companions))
	for i, c := range p.companions {
		out[i] = namedKey{Key: c.key, Arg: ArgMember, StandIn: "(name withheld: the member's " + c.what + " key)"}
	}
	return out
}

func (p *entryPlan) Notes() []string { return []string{ColdStartNote} }

func (p *entryPlan) Describe(states []State) ([]Change, error) {
	board := states[0]
	name := quoteKey(p.member.Name)
	if board.Sensitive {
		// Members and scores of a sensitive board are data: they appear in
		// no preview, summary, error or audit record.
		name = "the member named"
	}
	if board.Exists() && p.fam.TypeViolation(board.Type) != "" {
		return nil, typeMismatch(RemoveLeaderboardEntry{}, board, p.fam)
	}
	if board.Member == nil || !board.Member.Present {
		return nil, fmt.Errorf("%w: %s is not on leaderboard %s (removed already, or never there)", ErrNotFound, name, quoteKey(board.Key))
	}
	after := "without " + name
	if board.Size > 0 {
		after = fmt.Sprintf("%s (%d members)", after, board.Size-1)
	}
	out := make([]Change, len(states))
	if board.Sensitive {
		out[0] = Change{Key: board.Key, Op: "remove-member", After: after, Before: board,
			Text: fmt.Sprintf("REMOVE ENTRY %s from leaderboard %s (family %s, sensitive: member, score and rank not shown or recorded), only if its score is unchanged",
				name, quoteKey(board.Key), p.fam.ID)}
	} else {
		rank := "rank unknown"
		if r := board.Member.Rank; r >= 0 {
			rank = fmt.Sprintf("rank #%d", r+1)
			if board.Size >= 0 {
				rank += fmt.Sprintf(" of %d", board.Size)
			}
		}
		out[0] = Change{Key: board.Key, Op: "remove-member", After: after, Before: board,
			Text: fmt.Sprintf("REMOVE ENTRY %s from leaderboard %s (family %s: %s, score %s), only if its score is still %s",
				name, quoteKey(board.Key), p.fam.ID, rank, board.Member.Score, board.Member.Score)}
	}
	for i, c := range p.companions {
		s := states[i+1]
		if !s.Exists() {
			out[i+1] = Change{Key: s.Key, Op: "none", After: "absent", Before: s,
				Text: fmt.Sprintf("its %s %s (family %s): absent, nothing to delete", c.what, quoteKey(s.Key), c.fam.ID)}
			continue
		}
		if c.fam.TypeViolation(s.Type) != "" {
			return nil, typeMismatch(RemoveLeaderboardEntry{}, s, c.fam)
		}
		detail := ""
		if s.Type == "string" && !s.Sensitive {
			detail = fmt.Sprintf("value %q", s.Excerpt)
			if s.Truncated {
				detail += "…"
			}
			detail += "; "
		}
		out[i+1] = Change{Key: s.Key, Op: "delete", After: "absent", Before: s,
			Text: fmt.Sprintf("and its %s: DELETE %s (family %s, %s; %s%s)", c.what, quoteKey(s.Key), c.fam.ID, c.fam.Role, detail, s.Shape())}
	}
	return out, nil
}

func (p *entryPlan) Apply(ctx context.Context, tx redis.Pipeliner, states []State) {
	tx.ZRem(ctx, p.board, p.member.Name)
	var del []string
	for _, s := range states[1:] {
		if s.Exists() {
			del = append(del, s.Key)
		}
	}
	if len(del) > 0 {
		tx.Del(ctx, del...)
	}
}
