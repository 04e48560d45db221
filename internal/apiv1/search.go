package apiv1

import (
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/search"
)

// SearchPage mirrors the search page (handlers/search.go): one bounded
// request of a search through the connection's pack — exact keys derived
// from a value, bounded SCAN MATCH where it fills only part of a pattern,
// a family's key lists, or a glob. Meant for
// GET /api/v1/connections/{conn}/search?q=QUERY&cont=CURSOR.
type SearchPage struct {
	Conn   string          `json:"conn" doc:"The connection's name." example:"eisland"`
	Pack   PackState       `json:"pack" doc:"The schema pack the query is read against."`
	Query  SearchQuery     `json:"query" doc:"How the query was read."`
	User   *Name           `json:"user,omitempty" doc:"The value looks like a user name: its support view is GET /api/v1/connections/{conn}/user?name=…; absent otherwise."`
	Family *SearchFamily   `json:"family,omitempty" doc:"The family the query names (kind family): its key lists; absent otherwise."`
	Hits   List[SearchHit] `json:"hits" doc:"Keys found, by database and family; next continues the scans (cont=…), null when every scan is done."`
	Scans  []SearchScan    `json:"scans" nullable:"false" doc:"How far each scan got."`
	Stats  SearchStats     `json:"stats" doc:"What the request did and why it stopped."`
}

// SearchQuery is a parsed search.
type SearchQuery struct {
	Raw   Name   `json:"raw" doc:"The query as sent."`
	Kind  string `json:"kind" enum:"empty,glob,family,value" doc:"glob: SCAN MATCH in every database with keys; family: a family's id; value: a placeholder value, keys derived from it; empty: nothing to search."`
	Name  string `json:"name,omitempty" doc:"A value restricted to the placeholders of this name (name=value); absent otherwise."`
	Value *Name  `json:"value,omitempty" doc:"The value, glob escapes removed (kind value only)."`
}

// SearchFamily is a family named by the query.
type SearchFamily struct {
	ID          string       `json:"id"`
	Domain      string       `json:"domain"`
	Role        string       `json:"role"`
	Pattern     string       `json:"pattern"`
	Description string       `json:"description,omitempty"`
	Sensitive   bool         `json:"sensitive" doc:"Its values are never read or sent."`
	Databases   []SearchList `json:"databases" nullable:"false" doc:"Its key lists: GET /api/v1/connections/{conn}/db/{n}/keys?family=ID."`
}

// SearchList is a family's key list in one database.
type SearchList struct {
	DB   int    `json:"db" minimum:"0"`
	Keys *int64 `json:"db_keys,omitempty" minimum:"0" doc:"Keys in the database; absent when it has none listed in INFO keyspace."`
}

// SearchHit is one key found.
type SearchHit struct {
	DB     int    `json:"db" minimum:"0"`
	Key    Name   `json:"key"`
	Family string `json:"family,omitempty" doc:"The family's id; absent when no family of the pack explains the key."`
	Type   string `json:"type" example:"hash"`
	TTLMs  int64  `json:"ttl_ms" doc:"-1: none."`
	How    string `json:"how" enum:"derived,scan" doc:"derived: an exact key built from the value and checked; scan: found by SCAN MATCH."`
}

// SearchScan is how far one bounded SCAN MATCH in one database got.
type SearchScan struct {
	ID       string `json:"id" doc:"The scan's name in the continue cursor." example:"db.4"`
	DB       int    `json:"db" minimum:"0"`
	Match    Name   `json:"match" doc:"SCAN MATCH pattern."`
	DBKeys   int64  `json:"db_keys" minimum:"0" doc:"Keys in the database."`
	Calls    int    `json:"calls" minimum:"0" doc:"SCAN calls this request."`
	Examined int64  `json:"examined" minimum:"0" doc:"Keys looked at, about."`
	Returned int64  `json:"returned" minimum:"0" doc:"Keys SCAN returned (MATCH applied)."`
	Found    int    `json:"found" minimum:"0"`
	State    string `json:"state" enum:"done,earlier,stopped,not_started" doc:"done: reached the end of the database; earlier: finished on an earlier request; stopped: stopped by the request's bounds (continue); not_started: the search stopped before it (continue)."`
}

// SearchStats is what a search request did.
type SearchStats struct {
	Checked   int   `json:"checked" minimum:"0" doc:"Exact keys derived and checked."`
	Skipped   int   `json:"skipped" minimum:"0" doc:"Families the value cannot fill."`
	Absent    int   `json:"absent" minimum:"0" doc:"Families the value fits that live in no database with keys."`
	Capped    bool  `json:"capped" doc:"Stopped at the cap of keys listed."`
	Dropped   int   `json:"dropped" minimum:"0" doc:"Keys the last SCAN call matched past the cap: not listed, not returned by a continue (refine the query)."`
	TimedOut  bool  `json:"timed_out" doc:"Stopped after the time a request may scan."`
	Budget    bool  `json:"budget_spent" doc:"A live search stopped after its total of keys scanned."`
	Waiting   bool  `json:"waiting" doc:"Stopped waiting for the connection's scan budget, shared between people."`
	Scanned   int64 `json:"scanned" minimum:"0" doc:"Keys the scans looked at, about."`
	Continued bool  `json:"continued" doc:"A continue request: derived keys were checked by the first."`
	Commands  int   `json:"commands" minimum:"0" doc:"Redis commands this request issued."`
	Cap       int   `json:"cap" minimum:"0" doc:"Keys listed at most." example:"200"`
	ScanCount int64 `json:"scan_count" minimum:"0" doc:"SCAN COUNT." example:"200"`
	TimeMs    int64 `json:"time_ms" minimum:"0" doc:"Time a request may scan."`
}

// Search maps one search request's result (search.Run) under lim, the
// limits it ran with.
func Search(conn string, pc redisview.PackChoice, r search.Result, lim search.Limits) SearchPage {
	q := r.Query
	p := SearchPage{Conn: conn, Pack: packState(pc), Query: SearchQuery{Raw: Name(q.Raw), Kind: string(q.Kind), Name: q.Name},
		Hits: list(make([]SearchHit, 0, len(r.Hits))), Scans: make([]SearchScan, 0, len(r.Scans)),
		Stats: SearchStats{Checked: r.Checked, Skipped: r.Skipped, Absent: r.Absent, Capped: r.Capped, Dropped: r.Dropped, TimedOut: r.TimedOut,
			Budget: r.Budget, Waiting: r.Waiting, Scanned: r.Scanned, Continued: r.Continued, Commands: r.Commands,
			Cap: lim.Cap, ScanCount: lim.Count, TimeMs: Millis(lim.Time)}}
	if q.Kind == search.Value {
		p.Query.Value = ptr(Name(q.Value))
		if (q.Name == "" || search.KindOf(q.Name) == "user") && search.ValueKinds(q.Value)[0] == "user" {
			p.User = ptr(Name(q.Value))
		}
	}
	if f := q.Family; f != nil {
		sf := &SearchFamily{ID: f.ID, Domain: f.Domain, Role: string(f.Role), Pattern: f.Pattern.String(), Description: f.Description,
			Sensitive: f.Sensitive, Databases: make([]SearchList, 0, len(r.FamilyDBs))}
		for _, db := range r.FamilyDBs {
			n, ok := r.Keyspace[db]
			sf.Databases = append(sf.Databases, SearchList{DB: db, Keys: optional(n, ok)})
		}
		p.Family = sf
	}
	for _, h := range r.Hits {
		hit := SearchHit{DB: h.DB, Key: Name(h.Key), Type: h.Type, TTLMs: Millis(h.TTL), How: "derived"}
		if h.Family != nil {
			hit.Family = h.Family.ID
		}
		if h.Scan {
			hit.How = "scan"
		}
		p.Hits.Items = append(p.Hits.Items, hit)
	}
	if cur := r.Cursors(); cur != "" {
		p.Hits.Next = ptr(cur)
	}
	for _, s := range r.Scans {
		sc := SearchScan{ID: s.ID, DB: s.DB, Match: Name(s.Match), DBKeys: s.DBKeys, Calls: s.Calls, Examined: s.Examined, Returned: s.Returned, Found: s.Found}
		switch {
		case s.Earlier:
			sc.State = "earlier"
		case s.Done:
			sc.State = "done"
		case !s.Started:
			sc.State = "not_started"
		default:
			sc.State = "stopped"
		}
		p.Scans = append(p.Scans, sc)
	}
	return p
}
