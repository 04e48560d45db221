package apiv1

import (
	"github.com/keydeck/keydeck/redisview/browse"
)

// KeysPage mirrors a key list page (handlers/browse.go): one page of a
// family's keys, or of the keys no family matches that start with a
// prefix, found by a bounded SCAN walk (never KEYS). Meant for
// GET /api/v1/connections/{conn}/db/{n}/keys?family=ID|prefix=P[&flat=1]&at=CURSOR.
type KeysPage struct {
	Conn string       `json:"conn" doc:"The connection's name." example:"eisland"`
	DB   int          `json:"db" minimum:"0"`
	List KeyListScope `json:"list" doc:"Which keys the list holds."`
	Walk KeyWalk      `json:"walk" doc:"How the page was found."`
	Keys List[KeyRow] `json:"keys" doc:"The page's keys in SCAN order; next is the position of the next page (at=…), null at the end of the database."`
}

// KeyListScope is a family's keys, or the unmatched keys under a prefix.
type KeyListScope struct {
	Family    *FamilyRef `json:"family,omitempty" doc:"The family listed; absent for a prefix list."`
	Pattern   string     `json:"pattern,omitempty" doc:"The family's pattern; absent for a prefix list."`
	Sensitive bool       `json:"sensitive" doc:"The family's values are never read or sent (names are listed)."`
	Prefix    *Name      `json:"prefix,omitempty" doc:"The keys matching no family that start with it; absent for a family list."`
	Flat      bool       `json:"flat" doc:"A prefix list of only the names with no ':' after the prefix."`
}

// Walk states of a key list page.
const (
	WalkEnd    = "end"
	WalkBudget = "budget"
	WalkMore   = "more"
)

// KeyWalk is the SCAN walk that found a page.
type KeyWalk struct {
	Match    Name   `json:"match" doc:"SCAN MATCH pattern."`
	Type     string `json:"type,omitempty" doc:"SCAN TYPE: keys of the family stored as another type are left out (they are schema violations); absent for a prefix list."`
	WholeDB  bool   `json:"whole_db" doc:"No literal prefix narrows the walk: it goes through the whole database, page by page."`
	Count    int    `json:"scan_count" minimum:"0" doc:"SCAN COUNT." example:"200"`
	Scans    int    `json:"scans" minimum:"0" doc:"SCAN calls this page made."`
	Returned int    `json:"returned" minimum:"0" doc:"Keys those calls returned, before classification."`
	Skipped  int    `json:"skipped" minimum:"0" doc:"Keys of the first reply shown on earlier pages."`
	State    string `json:"state" enum:"end,budget,more" doc:"end: the walk reached SCAN cursor 0 (no next page); budget: the page stopped after its SCAN budget, the next goes on; more: the page is full."`
}

// KeyRow is one key of a list, as one pipelined read saw it.
type KeyRow struct {
	Key     Name          `json:"key"`
	Gone    bool          `json:"gone" doc:"The key vanished between SCAN and the read: type, ttl_ms and size are absent."`
	Type    string        `json:"type,omitempty" example:"hash"`
	TTLMs   *int64        `json:"ttl_ms,omitempty" doc:"-1: none; absent when gone."`
	Size    *int64        `json:"size,omitempty" minimum:"0" doc:"Elements (STRLEN for a string: bytes); absent when gone or not known."`
	Subject []Placeholder `json:"subject" nullable:"false" doc:"The key's placeholder values (empty for a prefix list)."`
}

// Keys maps one page of a key list (browse.List) of req.
func Keys(conn string, db int, req browse.Request, pg browse.Page) KeysPage {
	p := KeysPage{Conn: conn, DB: db, Keys: list(make([]KeyRow, 0, len(pg.Keys)))}
	if f := req.Family; f != nil {
		ref := familyRef(f, db)
		p.List = KeyListScope{Family: &ref, Pattern: f.Pattern.String(), Sensitive: f.Sensitive}
	} else {
		p.List = KeyListScope{Prefix: ptr(Name(req.Prefix)), Flat: req.Flat}
	}
	count := req.Count
	if count <= 0 {
		count = browse.Count
	}
	w := pg.Walk
	if w == (browse.Walk{}) {
		w = browse.WalkOf(req)
	}
	p.Walk = KeyWalk{Match: Name(w.Match), Type: w.Type, WholeDB: w.WholeDB, Count: count, Scans: pg.Scans, Returned: pg.Returned, Skipped: pg.Skipped}
	switch {
	case pg.End:
		p.Walk.State = WalkEnd
	case pg.Budget:
		p.Walk.State = WalkBudget
	default:
		p.Walk.State = WalkMore
	}
	if !pg.End {
		p.Keys.Next = ptr(pg.Next.String())
	}
	for _, k := range pg.Keys {
		r := KeyRow{Key: Name(k.Name), Subject: placeholders(k.Match.Vars)}
		if k.Type == "" {
			r.Gone = true
		} else {
			r.Type, r.TTLMs, r.Size = k.Type, ptr(Millis(k.TTL)), optional(k.Size, k.Size >= 0)
		}
		p.Keys.Items = append(p.Keys.Items, r)
	}
	return p
}
