package handlers

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/keydeck/keydeck/internal/live"
	"github.com/keydeck/keydeck/internal/route"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/action"
	"github.com/keydeck/keydeck/redisview/bans"
	"github.com/keydeck/keydeck/redisview/scanbudget"
	"github.com/keydeck/keydeck/redisview/schema"
	"github.com/keydeck/keydeck/redisview/search"
	"github.com/keydeck/keydeck/views"
	"github.com/keydeck/keydeck/views/format"
)

// userLimits bound the scans of one read of a user page (tests shrink
// them). A live user page continues an unfinished scan pass at most every
// userContinue and starts a new pass at most every userRescan after one
// finished; the ticks between re-read the keys found, with no SCAN.
var (
	userLimits   = search.DefaultUserLimits
	userRescan   = 30 * time.Second
	userContinue = 5 * time.Second
	// userReprobe: how often a live page checks every derived key again;
	// the ticks between re-read the keys found.
	userReprobe = 2 * time.Second
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

// userLocked reports a key of a window that locks (m) whose lock is among
// the keys found (present, by "db\x00key").
func userLocked(m schema.Match, db int, present map[string]bool) bool {
	sw, ok := m.Family.Params.(*schema.SlidingWindowParams)
	if !ok || sw.Lock == nil || sw.Lock.Family == nil {
		return false
	}
	k, err := sw.Lock.Key(m.Map())
	return err == nil && present[strconv.Itoa(db)+"\x00"+k]
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
	support := a.userSupport(actor(c).Role)
	switch {
	case a.auth.ReadOnly:
		vm.ActionNote = "This console is read-only: no fixing action is offered."
	case a.actions == nil:
		vm.ActionNote = "Actions are not configured."
	case !support:
		vm.ActionNote = "Fixing actions (reset a limit, release a lock, remove a leaderboard entry, unban) are for support and admin."
	}
	t := UserTopic{Conn: conn.Name, Name: name, Email: email, Support: support}
	st := &userState{}
	live, err := a.userRead(c.Request().Context(), conn, t, st, identity(c).holder(), a.scanTap(conn.Name, identity(c).holder()))
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
		a.handOff(t.String(), *st)
	}
	return render(c, http.StatusOK, vm, views.UserPage(page, vm))
}

// userSupport reports whether the page links fixing actions for role.
func (a *App) userSupport(r action.Role) bool {
	return r.Allows(action.Support) && !a.auth.ReadOnly && a.actions != nil
}

// userState is what a user page carries from one read to the next: the
// keys scans found and where the scans stand.
type userState struct {
	known   []search.UserHit
	cursors map[string]uint64
	scanned time.Time
	probed  time.Time          // the last read that checked every derived key
	scans   []search.ScanState // the last read with scans: how far each got
}

// userHandoff passes the page load's state to its live topic's first
// poll, so that opening a page scans once, not twice: by App and topic,
// taken once, ignored after userContinue.
var userHandoff sync.Map // userHandoffKey → userHandoffVal

type userHandoffKey struct {
	a     *App
	topic string
}

type userHandoffVal struct {
	st userState
	at time.Time
}

func (a *App) handOff(topic string, st userState) {
	now := a.now()
	userHandoff.Range(func(k, v any) bool { // drop what no topic took
		if now.Sub(v.(userHandoffVal).at) > time.Minute {
			userHandoff.Delete(k)
		}
		return true
	})
	userHandoff.Store(userHandoffKey{a, topic}, userHandoffVal{st: st, at: now})
}

func (a *App) takeOver(topic string) userState {
	v, ok := userHandoff.LoadAndDelete(userHandoffKey{a, topic})
	if !ok || a.now().Sub(v.(userHandoffVal).at) > userContinue {
		return userState{}
	}
	return v.(userHandoffVal).st
}

// userRead reads the page once: with a scan when none ran for
// userRescan (resuming unfinished scans), else re-reading the keys found.
// Its scans draw from the connection's scan budget as who; scans that
// waited for it in vain are tried again on the next read.
func (a *App) userRead(ctx context.Context, conn *redisview.Conn, t UserTopic, st *userState, who string, budget search.Budget) (views.UserLiveVM, error) {
	now := a.now()
	q := search.UserQuery{Subject: search.Subject{Name: t.Name, Email: t.Email}, Known: st.known}
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
	wait := userRescan
	if st.cursors != nil {
		wait = userContinue
	}
	if st.scanned.IsZero() || now.Sub(st.scanned) >= wait {
		q.Scan, q.Cursors = true, st.cursors // keys found stay known: a re-read drops those gone
	}
	q.Reprobe = q.Scan || st.probed.IsZero() || now.Sub(st.probed) >= userReprobe
	lim := userLimits
	lim.Budget = budget
	res, err := search.RunUser(ctx, conn, q, lim)
	if err != nil {
		return views.UserLiveVM{}, err
	}
	if q.Scan {
		st.cursors, st.scans = res.Cursors(), res.Scans
		if !res.Waiting {
			st.scanned = now
		}
	}
	if q.Reprobe {
		st.probed = now
	}
	st.known = res.Hits
	vm := a.userLiveVM(ctx, conn, t, res, now)
	at := format.Clock(st.scanned)
	for _, sc := range st.scans {
		vm.Scans = append(vm.Scans, views.SearchScanVM{DB: sc.DB, Match: sc.Match, Progress: userProgress(sc, at), Done: sc.Done})
	}
	if res.Waiting {
		vm.Notes = append(vm.Notes, a.budgetWait(conn.Name, who)+" The scans go on from where they are at the next read.")
	}
	if len(q.Boards) == 0 && hasBoards(conn) {
		vm.Notes = append(vm.Notes, "No leaderboard is known yet (the list of leaderboard keys is read in the background): ranks, and keys by game, appear once it is.")
	}
	return vm, nil
}

// hasBoards reports a pack with a leaderboard family.
func hasBoards(conn *redisview.Conn) bool {
	p := conn.Pack()
	return p != nil && slices.ContainsFunc(p.Families, func(f *schema.Family) bool { return f.Role == schema.RoleLeaderboard })
}

// userLiveVM turns a read into the page's live part: the keys decoded,
// grouped by the pack's domain in the pack's order.
func (a *App) userLiveVM(ctx context.Context, conn *redisview.Conn, t UserTopic, r search.UserResult, now time.Time) views.UserLiveVM {
	vm := views.UserLiveVM{ReadAt: format.Clock(now), Found: len(r.Hits), Checked: r.Checked, Commands: r.Commands,
		Took: format.Duration(r.Took.Round(time.Millisecond)), Support: t.Support, Email: r.Subject.Email}
	switch r.Subject.EmailFrom {
	case "":
	case "given":
		vm.EmailFrom = "given with the name"
	default:
		vm.EmailFrom = "the receipt address of the active order, " + r.Subject.EmailFrom
	}
	pack := conn.Pack()
	for _, b := range r.Bans {
		if b.Sensitive {
			vm.Bans = append(vm.Bans, views.UserBanVM{DB: b.DB, Bloom: b.BloomKey, Set: b.SetKey, Sensitive: true, Verdict: userHidden + " (the ban list is marked sensitive: its bits and members are never read)"})
			continue
		}
		bv := views.UserBanVM{DB: b.DB, Bloom: b.BloomKey, Set: b.SetKey, InSet: b.InSet, Banned: b.AllSet && (b.InSet || !b.HasSet), Verdict: b.Verdict}
		for i, p := range b.Positions {
			bv.Positions = append(bv.Positions, views.UserBitVM{Pos: strconv.FormatInt(p, 10), Set: b.Bits[i]})
		}
		if len(t.Name) <= route.MaxLinkedName {
			bv.CheckHref = route.BanCheckURL(conn.Name, t.Name)
		}
		a.userBanActions(conn, t, b, &bv)
		vm.Bans = append(vm.Bans, bv)
	}
	present := map[string]bool{}
	for _, h := range r.Hits {
		present[strconv.Itoa(h.DB)+"\x00"+h.Key] = true
	}
	order := map[string]int{}
	for i, f := range pack.Families {
		if _, ok := order[f.Domain]; !ok {
			order[f.Domain] = i
		}
	}
	cls := pack.Classifier()
	groups := map[string]*views.UserGroupVM{}
	var titles []string
	for _, h := range r.Hits {
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
		k := views.UserKeyVM{DB: h.DB, Key: h.Key, Type: h.Type, TTL: "none", Via: h.Via, Ambiguous: h.Ambiguous}
		if views.Linkable(h.Key) {
			k.Href = route.KeyURL(conn.Name, h.DB, h.Key)
		}
		if h.TTL >= 0 {
			k.TTL = format.TTL(h.TTL)
		}
		if f := h.Family; f != nil {
			k.Family, k.Role, k.Sensitive = f.ID, string(f.Role), f.Sensitive
			locked := false
			if m, ok := cls.Match(h.DB, h.Key); ok && m.Family == f {
				k.Decoded = keyDecoded(ctx, conn, h.DB, h.Key, h.Type, m, now)
				locked = userLocked(m, h.DB, present)
			}
			if !f.Sensitive && !k.Decoded.Withheld && k.Decoded.Summary == "" {
				userRaw(&k.Decoded, f, h)
			}
			if t.Support && views.Linkable(h.Key) && !a.actions.Protected(h.Key) {
				k.Actions = a.userKeyActions(conn.Name, h.DB, h.Key, userFix(f, locked))
			}
		}
		g.Keys = append(g.Keys, k)
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
	for _, title := range titles {
		vm.Groups = append(vm.Groups, *groups[title])
	}
	for _, rk := range r.Ranks {
		rv := views.UserRankVM{DB: rk.Board.DB, Board: rk.Board.Key, Found: rk.Found}
		if rk.Sensitive {
			// The board page refuses it too: no link.
			rv.Sensitive, rv.Hidden = true, userHidden+" (the board is marked sensitive: its members and scores are never read)"
			vm.Ranks = append(vm.Ranks, rv)
			continue
		}
		w := route.Window{Conn: conn.Name, DB: rk.Board.DB, Key: rk.Board.Key, N: route.DefaultRows}
		if rk.Found {
			rv.Rank, rv.Score = "#"+format.Count(rk.Rank+1), format.Score(rk.Score)
			w = w.At(rk.Rank / route.DefaultRows * route.DefaultRows)
			if t.Support && len(t.Name) <= route.MaxLinkedName {
				rv.Actions = a.userActions(conn.Name, rk.Board.DB, rk.Board.Key, rk.Board.Family, "zset", map[string]string{action.ArgMember: t.Name})
			}
		}
		if route.Linkable(rk.Board.Key) {
			rv.Href = w.URL()
		}
		vm.Ranks = append(vm.Ranks, rv)
	}
	if len(r.Scans) == 0 && len(r.Plan.Scans) > 0 {
		vm.Notes = append(vm.Notes, fmt.Sprintf("This read re-read the %s scans found, without scanning: an unfinished scan pass continues every %s, a new pass starts %s after one ends; every derived key is checked again every %s, the keys found on every tick.",
			format.Plural(int64(len(r.ScanHits())), "key", "keys"), format.Duration(userContinue), format.Duration(userRescan), format.Duration(userReprobe)))
	}
	if r.Capped {
		vm.Notes = append(vm.Notes, fmt.Sprintf("The scans stopped at %d keys: not every key found by scan is listed.", userLimits.Cap))
	}
	if len(r.Plan.NeedEmail) > 0 {
		ids := make([]string, len(r.Plan.NeedEmail))
		for i, f := range r.Plan.NeedEmail {
			ids[i] = f.ID
		}
		vm.Notes = append(vm.Notes, "The user's e-mail address is not known (Redis holds no record linking it to the username: only an active order's receipt address does; give it in the E-mail field), so the keys of "+
			format.Plural(int64(len(ids)), "family", "families")+" keyed by e-mail were not read: "+joinIDs(ids)+".")
	}
	if len(r.Plan.Games) > 0 {
		for ph, vals := range r.Plan.Games {
			vm.Notes = append(vm.Notes, fmt.Sprintf("Keys by {%s} were derived for the %s of the known leaderboards (%s); a {%s} with no leaderboard key is not searched.",
				ph, format.Plural(int64(len(vals)), "value", "values"), joinIDs(vals), ph))
		}
	}
	return vm
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
	if !t.Support || !b.HasSet || !a.canBan(action.Actor{Role: t.Role()}) {
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
		format.Count(s.Examined), format.Count(s.DBKeys), at, format.Plural(int64(s.Calls), "SCAN call", "SCAN calls"), userLimits.Count, found, format.Duration(userContinue))
}

const userKind = "user"

// UserTopic is one user page, live: "user:MODE:<query>", MODE support
// (fixing actions linked; support may watch) or viewer.
type UserTopic struct {
	Conn    string
	Name    string
	Email   string // given with the name; "" to find it
	Support bool
}

func (t UserTopic) String() string {
	mode := "viewer"
	if t.Support {
		mode = "support"
	}
	q := url.Values{"conn": {t.Conn}, "name": {t.Name}}
	if t.Email != "" {
		q.Set("email", t.Email)
	}
	return userKind + ":" + modeArg(mode, q)
}

// Role: the support mode's fragment carries action links.
func (t UserTopic) Role() action.Role {
	if t.Support {
		return action.Support
	}
	return action.Viewer
}

func parseUserTopic(arg string) (Topic, error) {
	mode, q, err := parseModeArg(arg, "viewer", "support")
	if err != nil {
		return nil, err
	}
	name, email := q.Get("name"), q.Get("email")
	if name == "" || len(name)+len(email) > route.MaxLinkedName || !redisview.ValidName(q.Get("conn")) {
		return nil, ErrUnknownTopic
	}
	return UserTopic{Conn: q.Get("conn"), Name: name, Email: email, Support: mode == "support"}, nil
}

func (t UserTopic) source(a *App) (func() live.Source, error) { return t.scanSource(a, "") }

// scanSource: the page's scans draw from the scan budget as who, the
// identity that started the topic.
func (t UserTopic) scanSource(a *App, who string) (func() live.Source, error) {
	conn, err := a.conns.Get(t.Conn)
	if err != nil {
		return nil, err
	}
	return func() live.Source {
		s := &userSource{a: a, conn: conn, t: t, who: who, pacer: a.scanPacer(conn.Name, who), st: a.takeOver(t.String())}
		if s.pacer != nil {
			s.budget = s.pacer
		}
		return s
	}, nil
}

// userSource re-reads the user's keys every tick; it scans again at most
// every userRescan, continuing where the last scan stopped.
type userSource struct {
	a    *App
	conn *redisview.Conn
	t    UserTopic
	who  string // whose scan budget its scans draw from
	// pacer keeps the page's place in the budget's queue between polls
	// (budget is it, or nil without a budget).
	pacer  *scanbudget.Pacer
	budget search.Budget

	mu     sync.Mutex
	st     userState
	last   *views.UserLiveVM
	lastAt time.Time
}

// Close gives up the page's place in the budget's queue.
func (s *userSource) Close() error {
	s.pacer.Close()
	return nil
}

func (s *userSource) Poll(ctx context.Context) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	vm, err := s.a.userRead(ctx, s.conn, s.t, &s.st, s.who, s.budget)
	if err != nil {
		why := "Could not be read: " + err.Error()
		if st := s.conn.Status(); !st.Up && !st.Checked.IsZero() {
			why = "Redis is unreachable — " + statusText(st) + "."
		}
		if s.last == nil {
			vm = views.UserLiveVM{Disconnected: why + " Nothing about this user has been read yet.", Support: s.t.Support}
		} else {
			vm = *s.last
			vm.Disconnected = why + " The figures below are from " + format.Clock(s.lastAt) + "."
		}
	} else {
		s.last, s.lastAt = &vm, s.a.now()
	}
	return renderBytes(ctx, views.UserLive(vm, true))
}
