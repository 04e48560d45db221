package search

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/keydeck/keydeck/redisview/schema"
)

// The user page's read (userplan.go, user.go, userround.go, userscan.go,
// userpage.go) finds everything about one user: every key of the pack's
// families that names the user (by username, account or e-mail address),
// the user's rank on every known leaderboard, and the ban check of the
// name. Keys the placeholders determine are derived and read in one
// pipeline per database; only families where the user fills some
// placeholders and the rest cannot be known are searched by a bounded,
// resumable SCAN.

// Subject is who the user page is about.
type Subject struct {
	Name  string // the username
	Email string // its e-mail address; "" when not known
	// EmailFrom says where Email came from ("given", or the key that
	// holds it); set by RunUser when it found the address itself.
	EmailFrom string
}

// Board is one leaderboard key (found by the leaderboard index).
type Board struct {
	DB     int
	Key    string
	Family *schema.Family
}

// UserLimits bound the scans of one read of a user page.
type UserLimits struct {
	Calls int   // SCAN calls per scan per read
	Count int64 // COUNT of each call
	Cap   int   // keys found by scan kept at most
	// Budget paces the scans (see Limits.Budget); Wait is the longest
	// the scans of one read wait for it altogether (0: 500 ms).
	Budget Budget
	Wait   time.Duration
}

// DefaultUserLimits: 25 SCAN calls × COUNT 100 per scan per read (about
// 2,500 keys of each database with a scan), at most 200 keys by scan.
// COUNT 100, not search's 200: on a loaded 1M-key server bench-user saw
// COUNT 200 with MATCH take up to 3.5 ms. A scan of a big database rarely
// finishes in one read: the live page continues it on later reads.
var DefaultUserLimits = UserLimits{Calls: 25, Count: 100, Cap: 200}

// userNames are placeholders that hold a username only; accountNames
// hold what a person signs in with: the username or the e-mail address.
var (
	userNames    = []string{"username", "ownerusername", "userid", "user", "member"}
	accountNames = []string{"account", "principal", "key"}
)

func phIs(ph schema.Placeholder, names []string) bool {
	return slices.Contains(names, strings.ToLower(ph.Name))
}

// UserProbe is an exact key derived for the user.
type UserProbe struct {
	Probe
	Via string // how: "username", "e-mail", "username as base64", "game 2048", …
}

// UserScan is a scan of the families the user fills only partly.
type UserScan struct {
	Scan
	Pins []map[string]string // per family: the placeholders the user fills
	Vias []string
	Free []bool // per family: an open placeholder takes free text
}

// UserPlan is the reads a user page needs.
type UserPlan struct {
	Probes []UserProbe
	Scans  []UserScan
	Boards []Board // leaderboards whose member is a username
	// NeedEmail: families keyed by e-mail alone while the e-mail is not
	// known; Absent: families naming a user in no database with keys.
	NeedEmail, Absent []*schema.Family
	Games             map[string][]string // placeholder → values known from the boards (gameId → 2048, …)
}

// KnownValues are the values of the boards' other placeholders (gameId),
// which let families keyed by game and user be derived exactly.
func KnownValues(pack *schema.Pack, boards []Board) map[string][]string {
	out := map[string][]string{}
	if pack == nil {
		return out
	}
	cls := pack.Classifier()
	for _, b := range boards {
		m, ok := cls.Match(b.DB, b.Key)
		if !ok {
			continue
		}
		member := ""
		if p, ok := m.Family.Params.(*schema.LeaderboardParams); ok {
			member = p.Member
		}
		for _, v := range m.Vars {
			if v.Name == member {
				continue
			}
			if !slices.Contains(out[v.Name], v.Value) {
				out[v.Name] = append(out[v.Name], v.Value)
			}
		}
	}
	for _, vs := range out {
		slices.Sort(vs)
	}
	return out
}

// maxCombos bounds the exact keys one family may derive from known values.
const maxCombos = 64

// PlanUser plans the reads of a user page over the databases with keys
// (dbs, ascending).
func PlanUser(pack *schema.Pack, subj Subject, dbs []int, boards []Board) UserPlan {
	var p UserPlan
	if pack == nil || subj.Name == "" {
		return p
	}
	p.Games = KnownValues(pack, boards)
	for _, b := range boards {
		if lp, ok := b.Family.Params.(*schema.LeaderboardParams); ok && slices.Contains(userNames, strings.ToLower(lp.Member)) && slices.Contains(dbs, b.DB) {
			p.Boards = append(p.Boards, b)
		}
	}
	byDB := map[int][]scanFam{}
	for _, f := range pack.Families {
		if f.Role == schema.RoleLeaderboard {
			continue // asked by member (Boards), never keyed by a user
		}
		p.planFamily(f, subj, dbs, byDB)
	}
	p.Scans = mergeScans(dbs, byDB)
	return p
}

// scanFam is one family's glob to scan in a database.
type scanFam struct {
	f    *schema.Family
	glob string
	enc  string
	pins map[string]string
	via  string
	free bool
}

// planFamily plans family f's keys of the user: derived exactly where
// the user's values (and the known games) fill every placeholder, else
// scanned for (byDB).
func (p *UserPlan) planFamily(f *schema.Family, subj Subject, dbs []int, byDB map[int][]scanFam) {
	phs := f.Pattern.Placeholders()
	var hasUser, hasAccount, hasEmail bool
	for _, ph := range phs {
		hasUser = hasUser || phIs(ph, userNames)
		hasAccount = hasAccount || phIs(ph, accountNames)
		hasEmail = hasEmail || KindOf(ph.Name) == "email"
	}
	if !hasUser && !hasAccount && !hasEmail {
		return
	}
	var in []int
	for _, db := range dbs {
		if f.InDB(db) {
			in = append(in, db)
		}
	}
	if len(in) == 0 {
		p.Absent = append(p.Absent, f)
		return
	}
	if hasEmail && !hasUser && !hasAccount && subj.Email == "" {
		p.NeedEmail = append(p.NeedEmail, f)
		return
	}
	for _, pn := range userPins(f, phs, subj, hasUser, hasAccount) {
		if !acceptsAll(f, pn.vals) {
			continue
		}
		var open []schema.Placeholder
		for _, ph := range phs {
			if _, ok := pn.vals[ph.Name]; !ok {
				open = append(open, ph)
			}
		}
		if keys, how, ok := derive(f, pn.vals, open, p.Games); ok {
			for i, k := range keys {
				for _, db := range in {
					p.Probes = append(p.Probes, UserProbe{Probe: Probe{Family: f, DB: db, Key: k}, Via: join(pn.via, how[i])})
				}
			}
			continue
		}
		globs, enc, ok := globsWith(f, pn.vals)
		if !ok {
			continue
		}
		free := slices.ContainsFunc(open, func(ph schema.Placeholder) bool { return ph.Class == schema.ClassAny })
		for _, db := range in {
			for _, glob := range globs {
				byDB[db] = append(byDB[db], scanFam{f: f, glob: glob, enc: enc, pins: pn.vals, via: pn.via, free: free})
			}
		}
	}
}

// pin is one way the user fills a family's placeholders.
type pin struct {
	vals map[string]string
	via  string
}

// userPins are the pinnings of f's placeholders (phs): the username in
// every user and account placeholder; then, when the e-mail is known, the
// e-mail in the account placeholders of a family that has no username
// one.
func userPins(f *schema.Family, phs []schema.Placeholder, subj Subject, hasUser, hasAccount bool) []pin {
	var pins []pin
	vals := map[string]string{}
	for _, ph := range phs {
		switch {
		case phIs(ph, userNames), phIs(ph, accountNames):
			vals[ph.Name] = subj.Name
		case KindOf(ph.Name) == "email" && subj.Email != "":
			vals[ph.Name] = subj.Email
		}
	}
	if len(vals) > 0 {
		pins = append(pins, pin{vals, viaOf(f, vals, subj)})
	}
	if subj.Email != "" && hasAccount && !hasUser {
		ev := map[string]string{}
		for _, ph := range phs {
			if phIs(ph, accountNames) || KindOf(ph.Name) == "email" {
				ev[ph.Name] = subj.Email
			}
		}
		pins = append(pins, pin{ev, viaOf(f, ev, subj)})
	}
	return pins
}

// mergeScans makes one cursor per database: its families' globs merged
// (with one value, their common start, then the value — a glob every
// base64 encoding of it matches; with the name and the e-mail, their
// common literal start alone). SCAN's cost is the keys it walks, not the
// MATCH, so a broader MATCH walks no more.
func mergeScans(dbs []int, byDB map[int][]scanFam) []UserScan {
	var out []UserScan
	for _, db := range dbs {
		g := byDB[db]
		if len(g) == 0 {
			continue
		}
		s := UserScan{Scan: Scan{ID: strconv.Itoa(db) + ".0", DB: db}}
		var encs []string
		for _, sf := range g {
			s.Families = append(s.Families, sf.f)
			s.Globs = append(s.Globs, sf.glob)
			s.Pins = append(s.Pins, sf.pins)
			s.Vias = append(s.Vias, sf.via)
			s.Free = append(s.Free, sf.free)
			if !slices.Contains(encs, sf.enc) {
				encs = append(encs, sf.enc)
			}
		}
		if len(encs) == 1 {
			s.Match = mergeGlobs(s.Families, s.Globs, encs[0])
		} else {
			prefix := literalPrefix(s.Globs[0])
			for _, gl := range s.Globs[1:] {
				lp := literalPrefix(gl)
				n := 0
				for n < len(prefix) && n < len(lp) && prefix[n] == lp[n] {
					n++
				}
				prefix = prefix[:n]
			}
			s.Match = schema.EscapeGlob(prefix) + "*"
		}
		out = append(out, s)
	}
	return out
}

func join(a, b string) string {
	if b == "" {
		return a
	}
	return a + ", " + b
}

// viaOf says which of the user's values a key holds, and how encoded.
func viaOf(f *schema.Family, vals map[string]string, subj Subject) string {
	var parts []string
	for _, ph := range f.Pattern.Placeholders() {
		v, ok := vals[ph.Name]
		if !ok {
			continue
		}
		what := "username"
		if v == subj.Email && subj.Email != "" {
			what = "e-mail"
		}
		if ph.Class.Decodes() {
			what += " as " + ph.Class.String()
		}
		if !slices.Contains(parts, what) {
			parts = append(parts, what)
		}
	}
	return strings.Join(parts, " + ")
}

// acceptsAll reports whether f's placeholders can hold vals, each in
// some encoding its class and length accept.
func acceptsAll(f *schema.Family, vals map[string]string) bool {
	for _, ph := range f.Pattern.Placeholders() {
		if v, ok := vals[ph.Name]; ok && len(ph.Encodings(v)) == 0 {
			return false
		}
	}
	return true
}

// derive builds f's exact keys when every open placeholder has known
// values (the games of the boards): per combination, at most maxCombos,
// its key in every encoding (a base64 account: standard or URL-safe,
// padded or not); ok is false when some placeholder has none.
func derive(f *schema.Family, vals map[string]string, open []schema.Placeholder, known map[string][]string) (keys, how []string, ok bool) {
	combos := []map[string]string{{}}
	for _, ph := range open {
		vs := known[ph.Name]
		if len(vs) == 0 {
			return nil, nil, false
		}
		var next []map[string]string
		for _, c := range combos {
			for _, v := range vs {
				m := map[string]string{ph.Name: v}
				for k, x := range c {
					m[k] = x
				}
				next = append(next, m)
			}
		}
		if len(next) > maxCombos {
			return nil, nil, false
		}
		combos = next
	}
	for _, c := range combos {
		all := map[string]string{}
		var hs []string
		for k, v := range vals {
			all[k] = v
		}
		for _, ph := range open {
			all[ph.Name] = c[ph.Name]
			hs = append(hs, ph.Name+" "+c[ph.Name])
		}
		ks, err := f.Keys(all)
		if err != nil {
			continue // a known value this placeholder cannot hold
		}
		for _, k := range ks {
			keys = append(keys, k)
			how = append(how, strings.Join(hs, ", "))
		}
	}
	return keys, how, true
}
