package apiv1

import (
	"strconv"
	"time"

	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/bans"
)

// BansPage mirrors the Bans page (handlers/bans.go) without its name
// check (that is GET /api/v1/connections/{conn}/ban-check): every bloom
// filter of the pack that has an exact set, its health, its consistency
// with the set, and a page of its members. Meant for
// GET /api/v1/connections/{conn}/bans?list=ID&filter=TEXT&cursor=CURSOR.
type BansPage struct {
	Conn  string        `json:"conn" doc:"The connection's name." example:"eisland"`
	Redis RedisState    `json:"redis" doc:"Whether the server answers."`
	Pack  PackState     `json:"pack" doc:"The schema pack that names the blooms and their sets."`
	Lists List[BanList] `json:"lists" doc:"The pack's blooms with an exact set, in the pack's order."`
}

// Gates: what a list's state lets support do.
const (
	GateOpen       = "open"
	GateFilter     = "filter"
	GateUnread     = "unread"
	GateWidespread = "widespread"
)

// BanList is one bloom filter with its exact set.
type BanList struct {
	ID          string `json:"id" doc:"The bloom family's id." example:"user-ban-bloom"`
	Domain      string `json:"domain" doc:"The bloom family's domain."`
	DB          int    `json:"db" minimum:"0" doc:"The database of the bloom and its set."`
	BloomKey    Name   `json:"bloom_key" doc:"The bloom's key."`
	SetKey      Name   `json:"set_key" doc:"The exact set's key."`
	Bans        bool   `json:"bans" doc:"The pack says the bloom is a ban list (support may ban and unban); false: a read-only filter."`
	Description string `json:"description,omitempty" doc:"The pack's description; absent when it has none."`
	Sensitive   bool   `json:"sensitive" doc:"The pack marks the bloom or its set sensitive: nothing of it is read or sent (health, consistency and members are absent)."`
	Gate        string `json:"gate" enum:"open,filter,unread,widespread" doc:"open: ban and unban work; filter: a read-only filter; unread: the bloom could not be read; widespread: most members lack their bloom bits, so the scheme is suspect and ban and unban are refused."`

	Health      *BanHealth      `json:"health,omitempty" doc:"The bloom's fill; absent when not read (see health_error, or sensitive)."`
	HealthError string          `json:"health_error,omitempty" doc:"Why the bloom could not be read; absent when it was."`
	Consistency *BanConsistency `json:"consistency,omitempty" doc:"Whether every member of the set has its bloom bits; absent when sensitive or not read (see consistency_error)."`
	ConsError   string          `json:"consistency_error,omitempty" doc:"Why the consistency check could not step; absent when it did."`
	Members     *BanMembers     `json:"members,omitempty" doc:"A page of the set's members; absent when not read (a filter's members are read on request, or see members_error)."`
	MembersErr  string          `json:"members_error,omitempty" doc:"Why the members could not be listed; absent when they were."`
}

// Shapes of a bloom's string against its configured bits.
const (
	ShapeAbsent = "absent"
	ShapeShort  = "short"
	ShapeLong   = "long"
	ShapeWhole  = "whole"
)

// BanHealth is a bloom's fill and what it costs.
type BanHealth struct {
	Exists        bool     `json:"exists" doc:"The bloom's key exists."`
	Bytes         int64    `json:"bytes" minimum:"0" doc:"The bloom's length (STRLEN)."`
	Bits          int64    `json:"bits" minimum:"0" doc:"Bits the pack configures." example:"1048576"`
	Hashes        int      `json:"hashes" minimum:"0" doc:"Hash positions per name." example:"6"`
	Shape         string   `json:"shape" enum:"absent,short,long,whole" doc:"absent; short: shorter than its bits take (bits past its end read as 0: harmless); long: longer (the application never reads past them); whole: allocated whole."`
	SetMembers    int64    `json:"set_members" minimum:"0" doc:"Members of the exact set (SCARD)."`
	Counted       bool     `json:"counted" doc:"The set bits were counted (blooms up to 64 MiB); when false, set_bits, fill_ratio and false_positive_ratio are absent: not known."`
	SetBits       *int64   `json:"set_bits,omitempty" minimum:"0" doc:"Bits set (BITCOUNT)."`
	FillRatio     *float64 `json:"fill_ratio,omitempty" minimum:"0" doc:"set_bits / bits."`
	FalsePositive *float64 `json:"false_positive_ratio,omitempty" minimum:"0" doc:"The chance a name never added reads as a hit now: fill_ratio^hashes."`
	Expected      float64  `json:"expected_false_positive_ratio" minimum:"0" doc:"That chance were the bloom holding the set's members only; above it, bits of removed names remain."`
	Creep         bool     `json:"false_positive_creep" doc:"The false-positive ratio is over twice the expected one."`
}

// Consistency states of a ban list.
const (
	ConsNotKnown     = "not_known"
	ConsConsistent   = "consistent"
	ConsInconsistent = "inconsistent"
)

// BanConsistency is the check that every member of the set has all its
// bloom bits (a member lacking one is silently ignored by the application).
type BanConsistency struct {
	State      string           `json:"state" enum:"not_known,consistent,inconsistent" doc:"not_known: no pass has completed and none found a member lacking bits; consistent: the last complete pass found none; inconsistent: a pass found some."`
	Widespread bool             `json:"widespread" doc:"The last complete pass found most members lacking bits: the scheme, not a few members, is at fault."`
	Last       *ConsistencyPass `json:"last,omitempty" doc:"The last complete pass; absent before one completed."`
	Current    *ConsistencyPass `json:"current,omitempty" doc:"The pass running; absent between passes."`
}

// ConsistencyPass is one pass of the consistency check.
type ConsistencyPass struct {
	Checked    int64      `json:"checked" minimum:"0" doc:"Members checked so far."`
	Total      int64      `json:"total" minimum:"0" doc:"Members of the set when the pass started."`
	Bad        int64      `json:"bad" minimum:"0" doc:"Members lacking a bloom bit (a lower bound until complete)."`
	Examples   []Name     `json:"examples" nullable:"false" doc:"Up to 5 of them."`
	Complete   bool       `json:"complete" doc:"The pass went over the whole set."`
	StartedAt  time.Time  `json:"started_at"`
	FinishedAt *time.Time `json:"finished_at,omitempty" doc:"Absent while running."`
}

// BanMembers is one page of a set's members.
type BanMembers struct {
	Count   int64           `json:"count" minimum:"0" doc:"Members of the set (SCARD)."`
	Filter  string          `json:"filter" doc:"The page's filter (members containing it; \"\": none)."`
	Partial bool            `json:"partial" doc:"The page ended early (a filter skipping most members): continue from next."`
	Page    List[BanMember] `json:"page" doc:"Members sorted within the page; next is the SSCAN cursor to continue from."`
}

// BanMember is one member of a set.
type BanMember struct {
	Name        Name  `json:"name"`
	MissingBits *bool `json:"missing_bits,omitempty" doc:"The member lacks a bloom bit: the application ignores its ban (set its bits, do not unban). Absent when not checked (a read-only filter, or the check failed)."`
}

// Bans maps the Bans page's data: one bans.ReadPage per list, in the
// pack's order. listed is the id of the list whose members were asked
// for with filter (the others are read from their first page, unfiltered).
func Bans(conn string, pc redisview.PackChoice, st redisview.Status, reads []bans.ListRead, listed, filter string, errText ErrText) BansPage {
	p := BansPage{Conn: conn, Redis: redisState(st), Pack: packState(pc), Lists: list[BanList](nil)}
	for _, r := range reads {
		f := ""
		if r.List.ID == listed {
			f = filter
		}
		p.Lists.Items = append(p.Lists.Items, BanListOf(r, f, errText))
	}
	return p
}

var gates = map[bans.Gate]string{bans.GateOpen: GateOpen, bans.GateFilter: GateFilter, bans.GateUnread: GateUnread, bans.GateWidespread: GateWidespread}

// BanListOf maps one list's read (bans.ReadPage).
func BanListOf(r bans.ListRead, filter string, errText ErrText) BanList {
	l := r.List
	v := BanList{ID: l.ID, Domain: l.Domain, DB: l.DB, BloomKey: Name(l.BloomKey), SetKey: Name(l.SetKey), Bans: l.Bans,
		Description: l.Description, Sensitive: l.Sensitive || r.Sensitive, Gate: gates[r.Gate()]}
	if v.Sensitive {
		if v.Gate == GateOpen {
			v.Gate = GateUnread
		}
		return v
	}
	v.HealthError, v.ConsError, v.MembersErr = errText.text(r.HealthErr), errText.text(r.StatusErr), errText.text(r.MembersErr)
	if r.HealthErr == nil {
		v.Health = banHealth(l, r.Health)
	}
	if r.StatusErr == nil {
		v.Consistency = banConsistency(r.Status)
	}
	if r.Members != nil && r.MembersErr == nil {
		v.Members = banMembers(r, filter)
	}
	return v
}

func banHealth(l bans.List, h bans.Health) *BanHealth {
	v := &BanHealth{Exists: h.Exists, Bytes: h.Bytes, Bits: h.Bits, Hashes: h.Hashes, SetMembers: h.Members, Counted: h.Counted, Expected: h.Expected}
	if h.Counted {
		v.SetBits, v.FillRatio, v.FalsePositive = ptr(h.SetBits), ptr(h.Fill), ptr(h.FalsePositive)
		v.Creep = h.FalsePositive > 2*h.Expected && h.FalsePositive > 1e-9
	}
	switch {
	case !h.Exists:
		v.Shape = ShapeAbsent
	case h.Short:
		v.Shape = ShapeShort
	case h.Long:
		v.Shape = ShapeLong
	default:
		v.Shape = ShapeWhole
	}
	return v
}

func banConsistency(st bans.Status) *BanConsistency {
	v := &BanConsistency{State: ConsNotKnown, Widespread: st.Widespread(), Last: consistencyPass(st.Last), Current: consistencyPass(st.Current)}
	switch {
	case st.Inconsistent():
		v.State = ConsInconsistent
	case st.Last != nil:
		v.State = ConsConsistent
	}
	return v
}

func consistencyPass(c *bans.Consistency) *ConsistencyPass {
	if c == nil {
		return nil
	}
	return &ConsistencyPass{Checked: c.Checked, Total: c.Total, Bad: c.Bad, Examples: names(c.Examples), Complete: c.Complete,
		StartedAt: Time(c.Started), FinishedAt: timePtr(c.Finished)}
}

func banMembers(r bans.ListRead, filter string) *BanMembers {
	page := r.Members
	m := &BanMembers{Count: page.Count, Filter: filter, Page: list(make([]BanMember, 0, len(page.Members)))}
	checked := r.List.Bans && r.LackingErr == nil
	for _, name := range page.Members {
		bm := BanMember{Name: Name(name)}
		if checked {
			bm.MissingBits = ptr(r.Lacking[name])
		}
		m.Page.Items = append(m.Page.Items, bm)
	}
	if page.Next != 0 {
		m.Page.Next = ptr(strconv.FormatUint(page.Next, 10))
		m.Partial = len(page.Members) < bans.PageSize
	}
	return m
}
