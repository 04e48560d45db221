package apiv1

import (
	"math"

	"github.com/keydeck/keydeck/redisview/search"
)

// User is everything Redis holds about one user, as the support user
// view reads it: the user's keys in every database (found by the pack's
// derivations and bounded scans), each decoded by its family's role; the
// user against every ban list; the user's leaderboard places.
type User struct {
	Conn  string `json:"conn"`
	Name  Name   `json:"name"`
	Email *Name  `json:"email,omitempty" doc:"The user's e-mail address when known (given, or found: email_from); keys by e-mail are derived from it."`
	// EmailFrom says where the address came from.
	EmailFrom string     `json:"email_from,omitempty" doc:"given, or the key that holds the address."`
	Pack      string     `json:"pack"`
	Keys      []UserKey  `json:"keys" doc:"The user's keys, in the order found."`
	Bans      []UserBan  `json:"bans"`
	Ranks     []UserRank `json:"ranks"`
	// Partial reads say what is missing.
	Capped    bool     `json:"capped" doc:"The scans stopped at their cap: not every key found by scan is listed."`
	Waiting   bool     `json:"waiting" doc:"The scans wait for the connection's scan budget: a later read finds more."`
	NeedEmail []string `json:"need_email" doc:"Families keyed by e-mail that were not read: the address is not known."`
	Checked   int      `json:"checked" doc:"Derived keys checked."`
	Commands  int      `json:"commands" doc:"Redis commands the read sent."`
	TookMs    int64    `json:"took_ms"`
}

// UserKey is one key of the user's.
type UserKey struct {
	DB        int         `json:"db"`
	Key       Name        `json:"key"`
	Type      string      `json:"type"`
	TTLMs     int64       `json:"ttl_ms" doc:"-1: no expiry."`
	Family    *string     `json:"family"`
	Role      *string     `json:"role"`
	Domain    *string     `json:"domain"`
	Sensitive bool        `json:"sensitive"`
	Via       string      `json:"via" doc:"How it was found (derived from the name, by scan, …)."`
	Ambiguous bool        `json:"ambiguous" doc:"The key may also belong to a longer name that starts with this one."`
	Decoded   *Decoded    `json:"decoded,omitempty" doc:"The role's reading of the key; absent when no role reads it."`
	Actions   []KeyAction `json:"actions" nullable:"false" doc:"The action that fixes the key (unlock-login, reset-limit, force-unlock…), for support and admin on a console that acts: preview it with POST /api/v1/actions/preview {kind, conn, db, key}. Empty otherwise."`
	// Value is the start of a small string no role reads (never of a
	// sensitive family).
	Value    *Name       `json:"value,omitempty" doc:"The start of a small string no role reads (never sensitive)."`
	ValueCut bool        `json:"value_cut,omitempty"`
	Fields   []UserField `json:"fields,omitempty" doc:"A leaderboard row's details."`
}

// UserField is one hash field read.
type UserField struct {
	Name  Name `json:"name"`
	Value Name `json:"value"`
}

// UserBan is the user against one bloom and its exact set.
type UserBan struct {
	DB           int     `json:"db"`
	BloomKey     Name    `json:"bloom_key"`
	SetKey       Name    `json:"set_key"`
	Banned       *bool   `json:"banned" doc:"null: not read (sensitive, or refused: error)."`
	BloomHit     *bool   `json:"bloom_hit"`
	InSet        *bool   `json:"in_set"`
	BloomMissing bool    `json:"bloom_missing" doc:"The bloom key does not exist: the filter lets everyone through."`
	Verdict      *string `json:"verdict"`
	Sensitive    bool    `json:"sensitive"`
	Error        string  `json:"error,omitempty"`
}

// UserRank is the user's place on one leaderboard.
type UserRank struct {
	DB        int      `json:"db"`
	Board     Name     `json:"board"`
	Found     *bool    `json:"found" doc:"The user is on the board; null when not read (sensitive, or error)."`
	Rank      *int64   `json:"rank" doc:"The place, 1 the top; null when not found."`
	Score     *float64 `json:"score"`
	Sensitive bool     `json:"sensitive"`
	Error     string   `json:"error,omitempty"`
}

// UserOf maps one read of the user view (search.ReadUserPage); errText
// words a role read's error.
func UserOf(conn, pack string, p search.UserPage, errText func(error) string) User {
	u := User{Conn: conn, Name: Name(p.Subject.Name), EmailFrom: p.Subject.EmailFrom, Pack: pack, Keys: []UserKey{}, Bans: []UserBan{}, Ranks: []UserRank{},
		Capped: p.Capped, Waiting: p.Waiting, NeedEmail: []string{}, Checked: p.Checked, Commands: p.Commands, TookMs: Millis(p.Took)}
	if p.Subject.Email != "" {
		e := Name(p.Subject.Email)
		u.Email = &e
	}
	for _, f := range p.Plan.NeedEmail {
		u.NeedEmail = append(u.NeedEmail, f.ID)
	}
	for i, h := range p.Hits {
		var kr search.HitRead
		if i < len(p.Keys) {
			kr = p.Keys[i]
		}
		u.Keys = append(u.Keys, userKeyOf(h, kr, errText))
	}
	for _, b := range p.Bans {
		u.Bans = append(u.Bans, userBanOf(b))
	}
	for _, r := range p.Ranks {
		u.Ranks = append(u.Ranks, userRankOf(r))
	}
	return u
}

func userKeyOf(h search.UserHit, kr search.HitRead, errText func(error) string) UserKey {
	k := UserKey{DB: h.DB, Key: Name(h.Key), Type: h.Type, TTLMs: Millis(h.TTL), Via: h.Via, Ambiguous: h.Ambiguous, Actions: []KeyAction{}}
	f := h.Family
	if f == nil {
		return k
	}
	id, role, domain := f.ID, string(f.Role), f.Domain
	k.Family, k.Role, k.Domain, k.Sensitive = &id, &role, &domain, f.Sensitive
	if kr.Matched || f.Sensitive {
		msg := ""
		if kr.Err != nil {
			msg = errText(kr.Err)
		}
		k.Decoded = DecodedOf(f, h.Type, kr.Read, kr.Result, msg)
	}
	if f.Sensitive {
		return k
	}
	if h.Type == "string" && (h.Value != "" || h.Cut) {
		v := Name(h.Value)
		k.Value, k.ValueCut = &v, h.Cut
	}
	for _, fd := range h.Fields {
		k.Fields = append(k.Fields, UserField{Name: Name(fd.Name), Value: Name(fd.Value)})
	}
	return k
}

func userBanOf(b search.BanCheck) UserBan {
	ub := UserBan{DB: b.DB, BloomKey: Name(b.BloomKey), SetKey: Name(b.SetKey), Sensitive: b.Sensitive, Error: b.Err}
	if b.Sensitive || b.Err != "" {
		return ub
	}
	banned := b.AllSet && (b.InSet || !b.HasSet)
	v := b.Verdict
	ub.Banned, ub.BloomHit, ub.InSet, ub.Verdict, ub.BloomMissing = &banned, &b.AllSet, &b.InSet, &v, b.BloomMissing
	return ub
}

func userRankOf(r search.Rank) UserRank {
	ur := UserRank{DB: r.Board.DB, Board: Name(r.Board.Key), Sensitive: r.Sensitive, Error: r.Err}
	if r.Sensitive || r.Err != "" {
		return ur
	}
	ur.Found = &r.Found
	if r.Found {
		rank, score := r.Rank+1, r.Score
		ur.Rank = &rank
		if !math.IsInf(score, 0) {
			ur.Score = &score
		}
	}
	return ur
}
