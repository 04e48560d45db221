package handlers

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/keydeck/keydeck/internal/route"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/action"
	"github.com/keydeck/keydeck/redisview/bans"
	"github.com/keydeck/keydeck/redisview/schema"
	"github.com/keydeck/keydeck/redisview/search"
	"github.com/keydeck/keydeck/views"
	"github.com/keydeck/keydeck/views/format"
)

// userLimits bound the scans of one read of a user page (tests shrink
// them); userCadence is how often a live page scans, continues a scan
// pass and checks every derived key again (search.UserCadence).
var (
	userLimits  = search.DefaultUserLimits
	userCadence = search.DefaultUserCadence
	// userBoardWait: how long a read waits for the leaderboard index's
	// first scan (a 1M-key server takes longer; the page must not).
	userBoardWait = 100 * time.Millisecond
)

// userFix is the fixing action the user page links on a key of family f
// ("" none), chosen as the Rate limits and Locks pages choose (action.Fix);
// locked: the window's lock is among the keys found.
func userFix(f *schema.Family, locked bool) string {
	return action.Fix(f, action.FixState{Locked: locked})
}

// userPage is everything about one user (?name=): its keys in every
// database, grouped by meaning and decoded, its leaderboard ranks and its
// ban status; live.
func (a *App) userPage(c echo.Context) error {
	conn, err := a.conns.Get(c.Param("conn"))
	if err != nil {
		return err
	}
	name, email := c.QueryParam("name"), c.QueryParam("email")
	if len(name) > search.MaxQuery || len(email) > search.MaxQuery {
		return fmt.Errorf("%w: the name is %s long; at most %s", route.ErrParam, format.ByteCount(int64(len(name))), format.ByteCount(search.MaxQuery))
	}
	vm := views.UserVM{Conn: conn.Name, Action: route.UserPath(conn.Name), Name: name, Email: email, SearchURL: route.SearchURL(conn.Name, name)}
	page := a.page(c, "User "+conn.Name, conn.Name)
	if name == "" {
		return render(c, http.StatusOK, vm, views.UserPage(page, vm))
	}
	pack := conn.Pack()
	if pack == nil {
		vm.Error = conn.Name + " has no schema pack (not chosen yet or none fits), so no key can be derived from a username."
		return render(c, http.StatusOK, vm, views.UserPage(page, vm))
	}
	vm.Pack = pack.Name
	support := a.userSupport(actor(c).Level)
	switch {
	case a.auth.ReadOnly:
		vm.ActionNote = "This console is read-only: no fixing action is offered."
	case a.actions == nil:
		vm.ActionNote = "Actions are not configured."
	case !support:
		vm.ActionNote = "Fixing actions (reset a limit, release a lock, remove a leaderboard entry, unban) are for support and admin."
	}
	t := UserTopic{Conn: conn.Name, Name: name, Email: email, Support: support}
	st := &search.UserState{}
	live, err := a.userRead(c.Request().Context(), conn, t, st, identity(c).Holder(), a.scanTap(conn.Name, identity(c).Holder()))
	if err != nil {
		if !errors.Is(err, redisview.ErrRead) {
			return err
		}
		vm.Error = "Nothing could be read: " + err.Error()
		if s := conn.Status(); !s.Up && !s.Checked.IsZero() {
			vm.Error = conn.Name + " is " + statusText(s) + ". " + vm.Error
		}
		return render(c, http.StatusBadGateway, vm, views.UserPage(page, vm))
	}
	vm.Live = live
	if len(name)+len(email) <= route.MaxLinkedName {
		vm.WSURL = route.LiveURL(t.String())
		if a.userStates != nil {
			a.userStates.Put(t.String(), *st)
		}
	}
	return render(c, http.StatusOK, vm, views.UserPage(page, vm))
}

// userSupport reports whether the page links fixing actions for role.
func (a *App) userSupport(r action.Level) bool {
	return r.Allows(action.Support) && !a.auth.ReadOnly && a.actions != nil
}

// userRead reads the page once (search.UserState plans the read: a scan
// when due, resuming unfinished scans, else a re-read of the keys found)
// and maps it. Its scans draw from the connection's scan budget as who.
func (a *App) userRead(ctx context.Context, conn *redisview.Conn, t UserTopic, st *search.UserState, who string, budget search.Budget) (views.UserLiveVM, error) {
	now := a.now()
	q := search.UserQuery{Subject: search.Subject{Name: t.Name, Email: t.Email}}
	if t.Email != "" {
		q.Subject.EmailFrom = "given"
	}
	// The leaderboards are the shared index's (scanned in the background);
	// the page waits for its first scan only briefly, and a later read
	// finds them.
	refs, _, err := a.lbIndex.Refs(conn, userBoardWait)
	if err == nil {
		for _, r := range refs {
			q.Boards = append(q.Boards, search.Board{DB: r.DB, Key: r.Key, Family: r.Family})
		}
	}
	st.Plan(&q, now, userCadence)
	lim := userLimits
	lim.Budget = budget
	page, err := search.ReadUserPage(ctx, conn, q, lim, now)
	if err != nil {
		return views.UserLiveVM{}, err
	}
	st.Record(q, page.UserResult, now)
	vm := a.userLiveVM(conn, t, page, now)
	at := format.Clock(st.Scanned)
	for _, sc := range st.Scans {
		vm.Scans = append(vm.Scans, views.SearchScanVM{DB: sc.DB, Match: sc.Match, Progress: userProgress(sc, at), Done: sc.Done})
	}
	if page.Waiting {
		vm.How = append(vm.How, a.budgetWait(conn.Name, who)+" The scans go on from where they are at the next read.")
	}
	if len(q.Boards) == 0 && hasBoards(conn) {
		vm.How = append(vm.How, "No leaderboard is known yet (the list of leaderboard keys is read in the background): ranks, and keys by game, appear once it is.")
	}
	return vm, nil
}

// hasBoards reports a pack with a leaderboard family.
func hasBoards(conn *redisview.Conn) bool {
	p := conn.Pack()
	return p != nil && slices.ContainsFunc(p.Families, func(f *schema.Family) bool { return f.Role == schema.RoleLeaderboard })
}

// userLiveVM maps one read of the page (search.ReadUserPage) to its live
// part: the keys decoded, grouped by the pack's domain in the pack's
// order, the ban checks, the ranks and the notes. It sends no command.
func (a *App) userLiveVM(conn *redisview.Conn, t UserTopic, r search.UserPage, now time.Time) views.UserLiveVM {
	vm := views.UserLiveVM{ReadAt: format.Clock(now), Found: len(r.Hits), Checked: r.Checked, Commands: r.Commands,
		Took: format.Duration(r.Took.Round(time.Millisecond)), Support: t.Support, Email: r.Subject.Email}
	switch r.Subject.EmailFrom {
	case "":
	case "given":
		vm.EmailFrom = "given with the name"
	default:
		vm.EmailFrom = "the receipt address of the active order, " + r.Subject.EmailFrom
	}
	for _, b := range r.Bans {
		vm.Bans = append(vm.Bans, a.userBanVM(conn, t, b))
	}
	vm.Groups = a.userGroups(conn, t, r, now)
	for _, rk := range r.Ranks {
		vm.Ranks = append(vm.Ranks, a.userRankVM(conn.Name, t, rk))
	}
	notes, how := userNotes(r.UserResult)
	vm.Notes, vm.How = append(vm.Notes, notes...), append(vm.How, how...)
	return vm
}

// userBanVM maps one ban check.
func (a *App) userBanVM(conn *redisview.Conn, t UserTopic, b search.BanCheck) views.UserBanVM {
	if b.Sensitive {
		return views.UserBanVM{DB: b.DB, Bloom: b.BloomKey, Set: b.SetKey, Sensitive: true, Verdict: userHidden + " (the ban list is marked sensitive: its bits and members are never read)"}
	}
	bv := views.UserBanVM{DB: b.DB, Bloom: b.BloomKey, Set: b.SetKey, InSet: b.InSet, Banned: b.AllSet && (b.InSet || !b.HasSet), Verdict: b.Verdict}
	for i, p := range b.Positions {
		bv.Positions = append(bv.Positions, views.UserBitVM{Pos: strconv.FormatInt(p, 10), Set: b.Bits[i]})
	}
	if len(t.Name) <= route.MaxLinkedName {
		bv.CheckHref = route.BanCheckURL(conn.Name, t.Name)
	}
	a.userBanActions(conn, t, b, &bv)
	return bv
}

// userGroups groups the keys found by their family's domain, in the
// pack's order (keys of no family last).
func (a *App) userGroups(conn *redisview.Conn, t UserTopic, r search.UserPage, now time.Time) []views.UserGroupVM {
	order := map[string]int{}
	for i, f := range conn.Pack().Families {
		if _, ok := order[f.Domain]; !ok {
			order[f.Domain] = i
		}
	}
	groups := map[string]*views.UserGroupVM{}
	var titles []string
	for i, h := range r.Hits {
		title := "Keys of no family"
		if h.Family != nil {
			title = h.Family.Domain
		}
		g := groups[title]
		if g == nil {
			g = &views.UserGroupVM{Title: title}
			groups[title] = g
			titles = append(titles, title)
		}
		var kr search.HitRead
		if i < len(r.Keys) {
			kr = r.Keys[i]
		}
		g.Keys = append(g.Keys, a.userKeyVM(conn, t, h, kr, now))
	}
	slices.SortStableFunc(titles, func(x, y string) int {
		ox, okx := order[x]
		oy, oky := order[y]
		switch {
		case !okx && !oky:
			return 0
		case !okx:
			return 1
		case !oky:
			return -1
		}
		return ox - oy
	})
	out := make([]views.UserGroupVM, 0, len(titles))
	for _, title := range titles {
		out = append(out, *groups[title])
	}
	return out
}

// userKeyVM maps one key found and its role read (kr).
func (a *App) userKeyVM(conn *redisview.Conn, t UserTopic, h search.UserHit, kr search.HitRead, now time.Time) views.UserKeyVM {
	k := views.UserKeyVM{DB: h.DB, Key: h.Key, Type: h.Type, TTL: "none", Via: h.Via, Ambiguous: h.Ambiguous}
	if views.Linkable(h.Key) {
		k.Href = route.KeyURL(conn.Name, h.DB, h.Key)
	}
	if h.TTL >= 0 {
		k.TTL = format.TTL(h.TTL)
	}
	f := h.Family
	if f == nil {
		return k
	}
	k.Family, k.Role, k.Sensitive = f.ID, string(f.Role), f.Sensitive
	if kr.Matched {
		if vm, read := decodeRead(kr.Match, h.Type); !read {
			k.Decoded = vm
		} else {
			k.Decoded = decodedVM(conn, h.DB, h.Key, kr.Match, kr.Result, kr.Err, now)
		}
	}
	if !f.Sensitive && !k.Decoded.Withheld && k.Decoded.Summary == "" {
		userRaw(&k.Decoded, f, h)
	}
	if t.Support && views.Linkable(h.Key) && !a.actions.Protected(h.Key) {
		k.Actions = a.userKeyActions(conn.Name, h.DB, h.Key, userFix(f, kr.Locked))
	}
	return k
}

// userRankVM maps the user's place on one leaderboard.
func (a *App) userRankVM(conn string, t UserTopic, rk search.Rank) views.UserRankVM {
	rv := views.UserRankVM{DB: rk.Board.DB, Board: rk.Board.Key, Found: rk.Found}
	if rk.Sensitive {
		// The board page refuses it too: no link.
		rv.Sensitive, rv.Hidden = true, userHidden+" (the board is marked sensitive: its members and scores are never read)"
		return rv
	}
	rv.Unread = rk.Err
	w := route.Window{Conn: conn, DB: rk.Board.DB, Key: rk.Board.Key, N: route.DefaultRows}
	if rk.Found {
		rv.Rank, rv.Score = "#"+format.Count(rk.Rank+1), format.Score(rk.Score)
		w = w.At(rk.Rank / route.DefaultRows * route.DefaultRows)
		if t.Support && len(t.Name) <= route.MaxLinkedName {
			rv.Actions = a.userActions(conn, rk.Board.DB, rk.Board.Key, rk.Board.Family, "zset", map[string]string{action.ArgMember: t.Name})
		}
	}
	if route.Linkable(rk.Board.Key) {
		rv.Href = w.URL()
	}
	return rv
}

// userNotes say what a read did not do. notes are what support must know
// (not every key is listed; give the e-mail to see its keys), said as
// what to do; how is how the data was read (scan passes, keys derived),
// behind the page's "How this was read".
func userNotes(r search.UserResult) (notes, how []string) {
	if len(r.Scans) == 0 && len(r.Plan.Scans) > 0 {
		how = append(how, fmt.Sprintf("This read re-read the %s scans found, without scanning: an unfinished scan pass continues every %s, a new pass starts %s after one ends; every derived key is checked again every %s, the keys found on every tick.",
			format.Plural(int64(len(r.ScanHits())), "key", "keys"), format.Duration(userCadence.Continue), format.Duration(userCadence.Rescan), format.Duration(userCadence.Reprobe)))
	}
	if r.Capped {
		notes = append(notes, fmt.Sprintf("Not every key of this user is listed: the search stopped at %d keys. Look a key up on the Search page to see the rest.", userLimits.Cap))
	}
	if len(r.Plan.NeedEmail) > 0 {
		ids := make([]string, len(r.Plan.NeedEmail))
		for i, f := range r.Plan.NeedEmail {
			ids[i] = f.ID
		}
		notes = append(notes, "Give this user's e-mail address (the E-mail field above) to see their e-mail codes and limits: Redis does not link it to the username.")
		how = append(how, "Only an active order's receipt address links an e-mail to the username, so the keys of "+
			format.Plural(int64(len(ids)), "family", "families")+" keyed by e-mail were not read: "+joinIDs(ids)+".")
	}
	for ph, vals := range r.Plan.Games {
		how = append(how, fmt.Sprintf("Keys by {%s} were derived for the %s of the known leaderboards (%s); a {%s} with no leaderboard key is not searched.",
			ph, format.Plural(int64(len(vals)), "value", "values"), joinIDs(vals), ph))
	}
	return notes, how
}

// userHidden says a part of the page was not read, rather than absent.
const userHidden = "hidden: sensitive"

// userRaw shows what RunUser read of a key no role decoder reads: the
// start of a small string, a leaderboard row's details.
func userRaw(d *views.DecodedVM, f *schema.Family, h search.UserHit) {
	if h.Type == "string" && (h.Value != "" || h.Cut) {
		v, _ := views.ShortName(h.Value)
		if h.Cut {
			v += "…"
		}
		d.Summary = "Value " + v
	}
	if len(h.Fields) == 0 {
		return
	}
	mp, _ := f.Params.(*schema.LeaderboardMetaParams)
	var parts []string
	for _, fd := range h.Fields {
		label := fd.Name
		if mp != nil && mp.Labels[fd.Name] != "" {
			label = mp.Labels[fd.Name]
		}
		v, _ := views.ShortName(fd.Value)
		if mp != nil {
			if mv := metaValue(mp.Formats[fd.Name], fd.Value); mv != fd.Value {
				v = mv
			}
		}
		d.Rows = append(d.Rows, views.DecodedRow{Label: label, Value: v})
		parts = append(parts, label+" "+v)
	}
	d.Summary = strings.Join(parts, ", ")
}

func joinIDs(ids []string) string {
	if len(ids) > 12 {
		return fmt.Sprintf("%s and %d more", joinIDs(ids[:12]), len(ids)-12)
	}
	out := ""
	for i, id := range ids {
		if i > 0 {
			out += ", "
		}
		out += views.EscapeName(id)
	}
	return out
}

// userKeyActions links the preview of the fixing action kind (userFix)
// on a key; none for "".
func (a *App) userKeyActions(conn string, db int, key, kind string) []views.UserActionVM {
	for _, k := range a.actions.Kinds() {
		if k.Name() == kind && k.Requires() == action.Support {
			return []views.UserActionVM{{Kind: kind, Title: k.Title(), Href: route.Action{Kind: kind, Conn: conn, DB: db, Key: key}.PreviewURL()}}
		}
	}
	return nil
}

// userActions links the previews of the support kinds that remove the
// user from a leaderboard of family f (args name the member).
func (a *App) userActions(conn string, db int, key string, f *schema.Family, typ string, args map[string]string) []views.UserActionVM {
	var out []views.UserActionVM
	for _, k := range a.actions.Kinds() {
		name := k.Name()
		if name != action.KindRemoveLeaderboardEntry || k.Requires() != action.Support || !action.AppliesTo(k, f) {
			continue
		}
		if kt, ok := k.(interface{ KeyType() string }); ok && kt.KeyType() != typ {
			continue
		}
		out = append(out, views.UserActionVM{Kind: name, Title: k.Title(), Href: route.Action{Kind: name, Conn: conn, DB: db, Key: key, Args: args}.PreviewURL()})
	}
	return out
}

// userBanActions links, for support, the unban preview when the name is in
// a ban list's set and the ban preview when it is not banned — the links
// the Bans page gives (banPreviewURL), on the same conditions: a ban list
// (not a read-only filter, not sensitive) whose bloom is not known to
// disagree with most of its set. A name in the set without all its bits
// gets the preview of setting them instead (its ban and unban are refused
// until then).
func (a *App) userBanActions(conn *redisview.Conn, t UserTopic, b search.BanCheck, bv *views.UserBanVM) {
	if !t.Support || !b.HasSet || !a.canBan(action.Actor{Level: t.Level()}) {
		return
	}
	l, ok := bans.ForKey(conn.Pack(), b.DB, b.SetKey)
	if !ok || !l.Bans || l.Sensitive {
		return
	}
	if bans.CheckerFor(conn, l).Status().Widespread() {
		bv.ActionsNote = "Ban and unban are disabled: most members of the set lack their bloom bits, so the pack's scheme is suspect (see the Bans page)."
		return
	}
	if b.InSet && !b.AllSet {
		bv.FixHref = bloomFixURL(conn.Name, l, t.Name)
		bv.ActionsNote = "This name is in the ban set but some of its bloom bits are clear, so the application never asks the set and its ban is silently ignored. Set its missing bits first; ban and unban of this name wait for that."
		return
	}
	if b.InSet {
		bv.UnbanHref = banPreviewURL(conn.Name, l, action.KindUnban, t.Name)
	}
	if !(b.InSet && b.AllSet) {
		bv.BanHref = banPreviewURL(conn.Name, l, action.KindBan, t.Name)
	}
}

// userProgress says how far a scan got on the read at at.
func userProgress(s search.ScanState, at string) string {
	found := format.Plural(int64(s.Found), "key", "keys")
	switch {
	case s.Earlier:
		return "finished on an earlier read of this pass."
	case s.Done:
		return fmt.Sprintf("scanned to the end of the database's %s keys; found %s in %s at %s.", format.Count(s.DBKeys), found, format.Plural(int64(s.Calls), "SCAN call", "SCAN calls"), at)
	}
	return fmt.Sprintf("about %s of ~%s keys scanned at %s (%s of COUNT %d); found %s. The live page continues from there every %s.",
		format.Count(s.Examined), format.Count(s.DBKeys), at, format.Plural(int64(s.Calls), "SCAN call", "SCAN calls"), userLimits.Count, found, format.Duration(userCadence.Continue))
}
