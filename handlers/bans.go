package handlers

import (
	"context"
	"fmt"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/keydeck/keydeck/internal/live"
	"github.com/keydeck/keydeck/internal/route"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/action"
	"github.com/keydeck/keydeck/redisview/bans"
	"github.com/keydeck/keydeck/views"
	"github.com/keydeck/keydeck/views/format"
)

// Consistency-check pages per step: a page load takes one, a live tick a
// few (each SSCAN page is followed by one GETBIT pipeline).
const (
	bansPagePages = 1
	bansTickPages = 4
)

// bansPage checks a name against every bloom of the connection's pack
// that has an exact set, and shows their health and members; live.
func (a *App) bansPage(c echo.Context) error {
	conn, err := a.conns.Get(c.Param("conn"))
	if err != nil {
		return err
	}
	q, err := route.ParseBansQuery(conn.Name, c.QueryParams())
	if err != nil {
		return err
	}
	act := a.canBan(actor(c))
	vm := a.bansVM(c.Request().Context(), conn, q, act, bansPagePages)
	vm.WSURL = route.LiveURL(BansTopic{Query: q, Act: act}.String())
	vm.CheckURL = route.BansURL(conn.Name)
	if a.actions != nil && !a.auth.ReadOnly && a.actions.Allowed(actor(c), action.KindRebuildBloom) {
		for _, l := range bans.Lists(conn) {
			if l.Bans {
				vm.Rebuilds = append(vm.Rebuilds, views.RebuildForm{List: l.ID, BloomKey: l.BloomKey, SetKey: l.SetKey, URL: route.BansRebuildURL(conn.Name)})
			}
		}
	}
	return render(c, http.StatusOK, vm, views.BansPage(a.page(c, "Bans · "+conn.Name, conn.Name), vm))
}

// canBan: the actor may ban and unban (support and up, not read-only).
func (a *App) canBan(act action.Actor) bool {
	return a.actions != nil && !a.auth.ReadOnly && a.actions.Allowed(act, action.KindBan) && a.actions.Allowed(act, action.KindUnban)
}

func (a *App) bansVM(ctx context.Context, conn *redisview.Conn, q route.BansQuery, act bool, pages int) views.BansVM {
	vm := views.BansVM{Conn: conn.Name, Check: q.Check}
	lists := bans.Lists(conn)
	if len(lists) == 0 {
		if conn.Pack() == nil {
			vm.Note = "No schema pack for this connection (yet), so no key is known to be a bloom filter."
		} else {
			vm.Note = "The pack " + conn.Pack().Name + " describes no bloom filter with an exact set (roles bloom and bloom-members)."
		}
	}
	errText := func(what string, err error) string {
		msg := what + ": " + conn.SafeErr(err)
		if st := conn.Status(); !st.Up && !st.Checked.IsZero() {
			msg = conn.Name + " is " + statusText(st) + ". " + msg
		}
		return msg
	}
	for _, l := range lists {
		pq := bans.PageQuery{Check: q.Check, Listed: q.List == l.ID, Pages: pages}
		if pq.Listed {
			pq.Filter, pq.Cursor = q.Filter, q.Cursor
		}
		r := bans.ReadPage(ctx, conn, l, pq, a.now())
		vm.Lists = append(vm.Lists, banListVM(conn.Name, r, q, act, errText))
	}
	return vm
}

// banListVM maps one list's read (bans.ReadPage) for the Bans page; act:
// the viewer may ban and unban. errText words a read error. It sends no
// command.
func banListVM(conn string, r bans.ListRead, q route.BansQuery, act bool, errText func(string, error) string) views.BanListVM {
	l := r.List
	v := views.BanListVM{ID: l.ID, Domain: l.Domain, DB: l.DB, BloomKey: l.BloomKey, SetKey: l.SetKey, Bans: l.Bans, Description: l.Description}
	if route.Linkable(l.BloomKey) {
		v.BloomHref = route.KeyURL(conn, l.DB, l.BloomKey)
	}
	if route.Linkable(l.SetKey) {
		v.SetHref = route.KeyURL(conn, l.DB, l.SetKey)
	}
	if r.Sensitive {
		v.Err = "Sensitive: the pack marks this bloom or its set sensitive, so its members and verdicts are never shown."
		return v
	}
	// The first error says it; the others would repeat it.
	for _, e := range []struct {
		what string
		err  error
	}{{"Cannot check the bloom against its set", r.StatusErr}, {"Cannot read the bloom", r.HealthErr},
		{"Cannot list the set", r.MembersErr}, {"Cannot read the members' bloom bits", r.LackingErr}} {
		if e.err != nil && v.Err == "" {
			v.Err = errText(e.what, e.err)
		}
	}
	if r.HealthErr == nil {
		v.Health = healthVM(l, r.Health, r.Status)
	}
	gate := r.Gate()
	canAct := act && gate == bans.GateOpen
	switch {
	case act && gate == bans.GateWidespread:
		v.ActionsNote = "Ban and unban are disabled: most members of the set lack their bloom bits (see above)."
	case act && l.Bans && r.Status.Inconsistent():
		v.ActionsNote = "Some members lack bloom bits (see above): set each one's missing bits; ban and unban of every other name work as usual."
	case act && gate == bans.GateFilter:
		v.ActionsNote = "Read-only: the pack says this bloom is a filter (purpose filter), not a ban list."
	}
	v.Actions = canAct
	links := banLinks{conn: conn, l: l, act: canAct}
	if v.Health.Mismatch {
		for _, e := range v.Health.Examples {
			v.Health.ExampleFixes = append(v.Health.ExampleFixes, links.fix(e))
		}
	}
	if q.Check != "" {
		v.Check = banCheckVM(r, q.Check, links, errText)
	}
	v.Members = banMembersVM(r, q, links)
	return v
}

// banLinks are the action and page links of one list's rows; act: ban,
// unban and fix are offered.
type banLinks struct {
	conn string
	l    bans.List
	act  bool
}

func (b banLinks) preview(kind, name string) string {
	if !b.act {
		return ""
	}
	return banPreviewURL(b.conn, b.l, kind, name)
}

func (b banLinks) fix(name string) string {
	if !b.act {
		return ""
	}
	return bloomFixURL(b.conn, b.l, name)
}

func (b banLinks) user(name string) string {
	if !b.l.Bans || !route.Linkable(name) {
		return ""
	}
	return route.UserURL(b.conn, name)
}

// banCheckVM maps the check of one name against the list.
func banCheckVM(r bans.ListRead, name string, links banLinks, errText func(string, error) string) *views.BanCheckVM {
	cv := &views.BanCheckVM{Name: name}
	if r.CheckErr != nil || r.Check == nil {
		cv.Err = errText("cannot read", r.CheckErr)
		cv.Tone = "warn"
		return cv
	}
	ch := r.Check
	cv.BloomHit, cv.InSet, cv.Verdict, cv.Words = ch.BloomHit, ch.InSet, string(ch.Verdict), ch.Words
	for _, p := range ch.Positions {
		cv.Positions = append(cv.Positions, views.BanPositionVM{Offset: p.Offset, Bit: p.Bit})
	}
	switch ch.Verdict {
	case bans.Listed, bans.Missed:
		cv.Tone = "bad"
	case bans.FalsePositive:
		cv.Tone = "warn"
	default:
		cv.Tone = "good"
	}
	if !r.List.Bans {
		cv.Tone = "good"
	}
	switch {
	case ch.Verdict == bans.Missed && r.List.Bans:
		// Ban and unban of it are refused until its bits are set.
		cv.FixHref = links.fix(name)
	case ch.InSet:
		cv.UnbanHref = links.preview(action.KindUnban, name)
	default:
		cv.BanHref = links.preview(action.KindBan, name)
	}
	cv.UserHref = links.user(name)
	cv.Plain = banPlain(ch.Verdict, r.List.Bans, cv.FixHref != "" || cv.BanHref != "" || cv.UnbanHref != "")
	return cv
}

// banPlain says after the checked name what the verdict means for the
// person and what support can do; act: the page offers the action.
func banPlain(v bans.Verdict, banList, act bool) string {
	if !banList {
		if v == bans.Listed {
			return " is in this filter."
		}
		return " is not in this filter."
	}
	var s, todo string
	switch v {
	case bans.Listed:
		s, todo = " is banned: the application turns them away.", " To lift the ban: Unban."
	case bans.Missed:
		s, todo = " is in the ban set, but the application does not see the ban (bloom bits missing): they are not turned away.", " To make the ban count: Set missing bits."
	default:
		s, todo = " is not banned.", " To ban them: Ban."
	}
	if act {
		s += todo
	}
	return s
}

// banMembersVM maps the page of members: the query's for the list it
// names, the first page of the others.
func banMembersVM(r bans.ListRead, q route.BansQuery, links banLinks) views.BanMembersVM {
	l := r.List
	mq := route.BansQuery{Conn: links.conn, Check: q.Check, List: l.ID}
	if q.List == l.ID {
		mq.Filter, mq.Cursor = q.Filter, q.Cursor
	}
	m := views.BanMembersVM{Filter: mq.Filter, ListID: l.ID, FormURL: route.BansURL(links.conn)}
	if !l.Bans && q.List != l.ID {
		// A read-only filter's members are listed on request only: the
		// page is about bans.
		m.ShowURL = mq.URL()
		return m
	}
	page := r.Members
	if page == nil {
		return m
	}
	m.Read, m.Count = true, format.Count(page.Count)
	for _, name := range page.Members {
		row := views.BanMemberRow{Name: name, UserHref: links.user(name), UnbanHref: links.preview(action.KindUnban, name)}
		if r.Lacking[name] {
			// The application ignores its ban: the fix, not an unban.
			row.Missing, row.UnbanHref, row.FixHref = true, "", links.fix(name)
		}
		if route.Linkable(name) {
			row.CheckHref = route.BansQuery{Conn: links.conn, Check: name, List: l.ID, Filter: mq.Filter, Cursor: mq.Cursor}.URL()
		}
		m.Rows = append(m.Rows, row)
	}
	if page.Next != 0 {
		next := mq
		next.Cursor = page.Next
		m.NextURL = next.URL()
		m.Partial = len(page.Members) < bans.PageSize
	}
	if mq.Cursor != 0 {
		first := mq
		first.Cursor = 0
		m.FirstURL = first.URL()
	}
	return m
}

// banPreviewURL links the preview of banning or unbanning name (kind
// action.KindBan or action.KindUnban) on the ban list l: the one builder
// of those links, for the Bans page and the user page. The name is an
// argument, carried byte-exact; "" when it is too long for a link.
func banPreviewURL(conn string, l bans.List, kind, name string) string {
	if !route.Linkable(name) {
		return ""
	}
	return route.Action{Kind: kind, Conn: conn, DB: l.DB, Key: l.SetKey, Args: map[string]string{action.ArgName: name}}.PreviewURL()
}

// bloomFixURL links the preview of setting the missing bloom bits of
// member, in the set of ban list l (action.KindSetBloomBits): for the
// Bans page and the user page. "" when the name is too long for a link.
func bloomFixURL(conn string, l bans.List, member string) string {
	if !route.Linkable(member) {
		return ""
	}
	return route.Action{Kind: action.KindSetBloomBits, Conn: conn, DB: l.DB, Key: l.SetKey, Args: map[string]string{action.ArgMember: member}}.PreviewURL()
}

// fpr formats a probability: "0.000000012 %" is unreadable, "1.2e-10" is not.
func fpr(p float64) string {
	switch {
	case p == 0:
		return "0"
	case p >= 0.0001:
		return format.Percent(p, 2)
	}
	return strconv.FormatFloat(p, 'e', 1, 64)
}

func healthVM(l bans.List, h bans.Health, st bans.Status) views.BanHealthVM {
	v := views.BanHealthVM{Read: true, Exists: h.Exists, Size: format.Bytes(h.Bytes), Bits: format.Count(h.Bits), Hashes: h.Hashes,
		Members: format.Count(h.Members), Expected: fpr(h.Expected)}
	if h.Counted {
		v.SetBits, v.Fill, v.FalsePositive = format.Count(h.SetBits), format.Percent(h.Fill, 4), fpr(h.FalsePositive)
		v.Creep = h.FalsePositive > 2*h.Expected && h.FalsePositive > 1e-9
	} else {
		v.SetBits, v.Fill, v.FalsePositive = "not counted", "not counted", "not known"
	}
	want := (l.Bits + 7) / 8
	switch {
	case !h.Exists:
		v.Shape = "absent"
	case h.Short:
		v.Shape = fmt.Sprintf("shorter than the %s its %s bits take (bits past its end read as 0: harmless)", format.Bytes(want), format.Count(l.Bits))
	case h.Long:
		v.Shape = fmt.Sprintf("longer than the %s its %s bits take (the application never reads past them)", format.Bytes(want), format.Count(l.Bits))
	default:
		v.Shape = "allocated whole"
	}
	if st.Inconsistent() {
		// The larger finding: the last complete pass, or the running one
		// once it has found more.
		c := st.Last
		if c == nil || st.Current != nil && st.Current.Bad > c.Bad {
			c = st.Current
		}
		v.Mismatch, v.Widespread, v.Bad, v.Examples = true, st.Widespread(), format.Plural(c.Bad, "member lacks", "members lack"), c.Examples
		if !c.Complete {
			v.Bad = "at least " + v.Bad
		}
	} else if st.Last != nil {
		v.Consistent = true
		v.Checked = fmt.Sprintf("every member checked (%s)", format.Count(st.Last.Checked))
		if st.Last.Checked == 0 {
			v.Checked = "the set was empty: nothing to check"
		}
		v.CheckedAt = format.Clock(st.Last.Finished)
	}
	if c := st.Current; c != nil {
		v.Running = true
		pct := 0
		if c.Total > 0 {
			pct = int(min(100, c.Checked*100/c.Total))
		}
		v.Progress = pct
		v.Checked = fmt.Sprintf("%s of %s members (%d %%)", format.Count(c.Checked), format.Count(c.Total), pct)
	} else if st.Last == nil {
		v.PendingNote = "Consistency with the set: not known yet."
	}
	return v
}

// rebuildBans shows the preview of rebuilding a ban list's bloom from its
// set (admin). The preview computes the new bloom in memory and writes
// nothing; the confirmation computes it again and writes it (see
// action.RebuildBloom).
func (a *App) rebuildBans(c echo.Context) error {
	conn, err := a.conns.Get(c.Param("conn"))
	if err != nil {
		return err
	}
	back := route.BansURL(conn.Name)
	if a.actions == nil || !a.actions.Allowed(actor(c), action.KindRebuildBloom) {
		return withBack(fmt.Errorf("%w: rebuilding a bloom needs the admin role", action.ErrForbidden), back)
	}
	l, err := bans.Find(conn, c.FormValue("list"))
	if err != nil || !l.Bans {
		return withBack(fmt.Errorf("%w: %q is not a ban list of %s", action.ErrInvalid, c.FormValue("list"), conn.Name), back)
	}
	return a.preview(c, action.KindRebuildBloom, action.Request{Conn: conn.Name, DB: l.DB, Key: l.BloomKey}, back)
}

const bansKind = "bans"

// BansTopic is a connection's live bans page, "bans:MODE:<query>": one
// poller per query and mode. The act mode's fragments carry ban and unban
// links, for support and up.
type BansTopic struct {
	Query route.BansQuery
	Act   bool
}

func (t BansTopic) String() string {
	mode := "plain"
	if t.Act {
		mode = "act"
	}
	v := t.Query.Values()
	v.Set("conn", t.Query.Conn)
	return bansKind + ":" + modeArg(mode, v)
}

func (t BansTopic) Level() action.Level {
	if t.Act {
		return action.Support
	}
	return action.Viewer
}

func parseBansTopic(arg string) (Topic, error) {
	mode, q, err := parseModeArg(arg, "plain", "act")
	if err != nil {
		return nil, err
	}
	conn := q.Get("conn")
	if !redisview.ValidName(conn) {
		return nil, ErrUnknownTopic
	}
	bq, err := route.ParseBansQuery(conn, q)
	if err != nil {
		return nil, err
	}
	return BansTopic{Query: bq, Act: mode == "act"}, nil
}

func (t BansTopic) source(a *App) (func() live.Source, error) {
	conn, err := a.conns.Get(t.Query.Conn)
	if err != nil {
		return nil, err
	}
	topic := t.String()
	return func() live.Source {
		// Keyspace notifications on the blooms and sets kick the topic: a
		// ban or unban shows at once rather than at the next poll.
		var watched []bans.List
		if a.keyWatch != nil {
			watched = bans.Lists(conn)
			for _, l := range watched {
				a.keyWatch.Add(conn.Name, l.DB, l.BloomKey, topic)
				a.keyWatch.Add(conn.Name, l.DB, l.SetKey, topic)
			}
		}
		return &lbSource{
			poll: func(ctx context.Context) ([]byte, error) {
				vm := a.bansVM(ctx, conn, t.Query, t.Act && a.actions != nil && !a.auth.ReadOnly, bansTickPages)
				return renderBytes(ctx, views.BansLive(vm, true))
			},
			close: func() {
				for _, l := range watched {
					a.keyWatch.Remove(conn.Name, l.DB, l.BloomKey, topic)
					a.keyWatch.Remove(conn.Name, l.DB, l.SetKey, topic)
				}
			},
		}
	}, nil
}
