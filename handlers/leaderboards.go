package handlers

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/keydeck/keydeck/internal/live"
	"github.com/keydeck/keydeck/redisview/action"
	"github.com/keydeck/keydeck/redisview/leaderboard"
	"github.com/keydeck/keydeck/views"
	"github.com/keydeck/keydeck/views/format"
)

const (
	lbDefaultN   = 50
	lbMaxN       = 500
	lbMaxStart   = 1_000_000_000 // far past any board; keeps start+n from overflowing
	lbTopicKind  = "lb"
	lbListTopic  = "leaderboards:all"
	removeKind   = action.KindRemoveLeaderboardEntry
	coldStartMsg = "The application may rebuild this leaderboard from its database on a cache miss (cold start): an entry removed here can come back unless it is removed there too."
)

var lbNOptions = []int64{10, 25, 50, 100, 200, 500}

// lbView names one leaderboard window.
type lbView struct {
	conn     string
	db       int
	key      string
	start, n int64
}

func (v lbView) query() url.Values {
	return url.Values{"conn": {v.conn}, "db": {strconv.Itoa(v.db)}, "k": {v.key}, "start": {strconv.FormatInt(v.start, 10)}, "n": {strconv.FormatInt(v.n, 10)}}
}

func (v lbView) pageURL() string { return fmt.Sprintf("/c/%s/db/%d/leaderboard", v.conn, v.db) }

func (v lbView) id() leaderboard.WindowID {
	return leaderboard.WindowID{Conn: v.conn, DB: v.db, Key: v.key, Start: v.start, N: v.n}
}

func (v lbView) href(start int64) string {
	q := url.Values{"k": {v.key}, "start": {strconv.FormatInt(start, 10)}, "n": {strconv.FormatInt(v.n, 10)}}
	return v.pageURL() + "?" + q.Encode()
}

// parseLBView validates a leaderboard window from query values.
func parseLBView(conn string, dbs string, q url.Values) (lbView, error) {
	db, err := parseDB(dbs)
	if err != nil {
		return lbView{}, err
	}
	v := lbView{conn: conn, db: db, key: q.Get("k"), n: lbDefaultN}
	if v.key == "" && q.Has("kq") {
		// The page's forms send a key that a form field would change (not
		// UTF-8, control characters) query-escaped once more, as kq
		// (views.keyFieldName), so it arrives byte-exact.
		if v.key, err = url.QueryUnescape(q.Get("kq")); err != nil {
			return v, echo.NewHTTPError(http.StatusBadRequest, "kq: want a query-escaped key.")
		}
	}
	if v.key == "" || !views.Linkable(v.key) {
		return v, echo.NewHTTPError(http.StatusBadRequest, "Name the leaderboard key with ?k= (at most 4 KiB).")
	}
	if s := q.Get("start"); s != "" {
		if v.start, err = strconv.ParseInt(s, 10, 64); err != nil || v.start < 0 || v.start > lbMaxStart {
			return v, echo.NewHTTPError(http.StatusBadRequest, "start: want a rank offset from 0 to 1,000,000,000.")
		}
	}
	if s := q.Get("n"); s != "" {
		if v.n, err = strconv.ParseInt(s, 10, 64); err != nil || v.n < 1 || v.n > lbMaxN {
			return v, echo.NewHTTPError(http.StatusBadRequest, fmt.Sprintf("n: want 1 to %d rows.", lbMaxN))
		}
	}
	return v, nil
}

func (a *App) leaderboardList(c echo.Context) error {
	vm := a.lbListVM(c.Request().Context())
	return render(c, http.StatusOK, views.LeaderboardListPage(a.page(c, "Leaderboards", ""), vm))
}

func (a *App) lbListVM(ctx context.Context) views.LeaderboardListVM {
	vm := views.LeaderboardListVM{WSURL: wsURL(lbListTopic)}
	for _, conn := range a.conns.All() {
		g := views.LeaderboardGroup{Conn: conn.Name}
		refs, truncated, err := a.lbIndex.Refs(conn, 3*time.Second)
		var boards []leaderboard.Summary
		if err == nil {
			boards, err = leaderboard.Summarize(ctx, conn, refs)
		}
		switch {
		case err != nil:
			g.Note = "Cannot list: " + err.Error()
		case len(boards) == 0 && conn.Pack() == nil:
			g.Note = "No schema pack, so no key is known to be a leaderboard."
		case len(boards) == 0:
			g.Note = "No leaderboard keys."
		case truncated:
			g.Note = "Showing the first " + format.Count(leaderboard.DefaultListLimit) + " leaderboards."
		}
		for _, b := range boards {
			it := views.LeaderboardItem{Key: b.Key, DB: b.DB, Family: b.Family, Size: format.Count(b.Size)}
			if views.Linkable(b.Key) {
				it.Href = lbView{conn: conn.Name, db: b.DB, key: b.Key, n: lbDefaultN}.href(0)
			}
			if b.HasTop {
				it.Top, it.TopScore = b.TopMember, format.Score(b.TopScore)
			}
			g.Boards = append(g.Boards, it)
		}
		vm.Groups = append(vm.Groups, g)
	}
	return vm
}

func (a *App) lbListSource(arg string) (func() live.Source, action.Role, error) {
	if arg != "all" {
		return nil, 0, fmt.Errorf("%w %q", errUnknownTopic, "leaderboards:"+arg)
	}
	return func() live.Source {
		return live.SourceFunc(func(ctx context.Context) ([]byte, error) {
			return renderBytes(ctx, views.LeaderboardListLive(a.lbListVM(ctx), true))
		})
	}, action.Viewer, nil
}

// leaderboardPage shows one leaderboard window, a member lookup, and the
// live rows.
func (a *App) leaderboardPage(c echo.Context) error {
	conn, err := a.conns.Get(c.Param("conn"))
	if err != nil {
		return err
	}
	v, err := parseLBView(conn.Name, c.Param("db"), c.QueryParams())
	if err != nil {
		return err
	}
	if conn.Sensitive(v.db, v.key) {
		return echo.NewHTTPError(http.StatusForbidden, "This key belongs to a sensitive family: its values are never shown.")
	}
	ctx := c.Request().Context()
	canRemove := a.canRemove(actor(c))
	w, err := leaderboard.Read(ctx, conn, v.db, v.key, v.start, v.n)
	vm := a.lbVM(v, w, err, nil, canRemove, a.lbTracker.Peek(v.id()))
	if m := c.QueryParam("member"); m != "" {
		vm.LookupQuery = m
		lw, rank, found, err := leaderboard.Lookup(ctx, conn, v.db, v.key, m, 5)
		if err != nil {
			return echo.NewHTTPError(http.StatusBadGateway, "Redis could not be read: "+err.Error())
		}
		lk := &views.LookupVM{Member: m, Found: found}
		if found {
			lk.Rank = format.Count(rank + 1)
			for _, e := range lw.Entries {
				if e.Member == m {
					lk.Score = format.Score(e.Score)
				}
			}
			lk.Rows = a.lbRows(v, lw, nil, false)
		}
		vm.Lookup = lk
	}
	return render(c, http.StatusOK, views.LeaderboardPage(a.page(c, "Leaderboard", conn.Name), vm))
}

func (a *App) canRemove(act action.Actor) bool {
	return a.actions != nil && !a.auth.ReadOnly && a.actions.Allowed(act, removeKind)
}

func lbTopic(remove bool, v lbView) string {
	mode := "plain"
	if remove {
		mode = "remove"
	}
	return lbTopicKind + ":" + mode + ":" + v.query().Encode()
}

// lbSource resolves "lb:MODE:<query>": one poller per window and mode.
func (a *App) lbSource(arg string) (func() live.Source, action.Role, error) {
	mode, q, _ := strings.Cut(arg, ":")
	vals, err := url.ParseQuery(q)
	if (mode != "plain" && mode != "remove") || err != nil {
		return nil, 0, fmt.Errorf("%w %q", errUnknownTopic, lbTopicKind+":"+arg)
	}
	conn, err := a.conns.Get(vals.Get("conn"))
	if err != nil {
		return nil, 0, err
	}
	v, err := parseLBView(conn.Name, vals.Get("db"), vals)
	if err != nil {
		return nil, 0, fmt.Errorf("%w %q", errUnknownTopic, lbTopicKind+":"+arg)
	}
	if conn.Sensitive(v.db, v.key) {
		return nil, 0, fmt.Errorf("%w %q: sensitive family", errUnknownTopic, lbTopicKind+":"+arg)
	}
	role := action.Viewer
	if mode == "remove" {
		role = action.Support
	}
	topic := lbTopicKind + ":" + arg
	return func() live.Source {
		st := a.lbTracker.Get(v.id())
		a.keyWatch.Add(conn.Name, v.db, v.key, topic)
		return &lbSource{
			poll: func(ctx context.Context) ([]byte, error) {
				w, err := leaderboard.Read(ctx, conn, v.db, v.key, v.start, v.n)
				var marks map[string]leaderboard.Move
				if err == nil {
					marks = st.Observe(w.Entries, a.now())
				}
				return renderBytes(ctx, views.LeaderboardLive(a.lbVM(v, w, err, marks, mode == "remove", st), true))
			},
			close: func() { a.keyWatch.Remove(conn.Name, v.db, v.key, topic) },
		}
	}, role, nil
}

func (a *App) lbVM(v lbView, w leaderboard.Window, err error, marks map[string]leaderboard.Move, canRemove bool, st *leaderboard.Tracked) views.LeaderboardVM {
	vm := views.LeaderboardVM{Conn: v.conn, DB: v.db, Key: v.key, Family: w.Family, Start: v.start, N: v.n, NOptions: rowOptions(w.Retained, v.n),
		WSURL: wsURL(lbTopic(canRemove, v)), Size: format.Count(w.Size), MetaFields: w.MetaFields, CanRemove: canRemove,
		Note: coldStartMsg, PageURL: v.pageURL()}
	if err != nil {
		vm.Err = "Cannot read the leaderboard: " + err.Error()
	}
	if v.start > 0 {
		vm.Prev = v.href(max(0, v.start-v.n))
	}
	if v.start+v.n < w.Size {
		vm.Next = v.href(v.start + v.n)
	}
	vm.Rows = a.lbRows(v, w, marks, canRemove)
	counts := make([]int, 60)
	if st != nil {
		counts = st.Activity().PerMinute(a.now())
	}
	peak := 0
	for _, n := range counts {
		peak = max(peak, n)
	}
	vm.ActivityMax = format.Count(int64(peak))
	for i, n := range counts {
		h := 0.0
		if peak > 0 {
			h = float64(n) / float64(peak) * 58
		}
		vm.Activity = append(vm.Activity, views.ActivityBar{
			X: strconv.Itoa(i * 4), Y: strconv.FormatFloat(60-h, 'f', 1, 64), H: strconv.FormatFloat(h, 'f', 1, 64),
			Title: activityTitle(len(counts)-1-i, n),
		})
	}
	return vm
}

// rowOptions offers window sizes up to the board's retained size (the
// application prunes beyond it), always including the size in use.
func rowOptions(retained int, current int64) []int64 {
	var out []int64
	for _, o := range lbNOptions {
		if retained > 0 && o > int64(retained) {
			break
		}
		out = append(out, o)
	}
	if retained > 0 && retained < lbMaxN && !slices.Contains(out, int64(retained)) {
		out = append(out, int64(retained))
	}
	if !slices.Contains(out, current) {
		out = append(out, current)
		slices.Sort(out)
	}
	return out
}

func (a *App) lbRows(v lbView, w leaderboard.Window, marks map[string]leaderboard.Move, canRemove bool) []views.LeaderboardRow {
	var rows []views.LeaderboardRow
	for _, e := range w.Entries {
		r := views.LeaderboardRow{Rank: format.Count(e.Rank + 1), Member: e.Member, Score: format.Score(e.Score)}
		for _, f := range w.MetaFields {
			r.Meta = append(r.Meta, metaValue(f, e.Meta[f]))
		}
		if mv, ok := marks[e.Member]; ok {
			switch mv.Kind {
			case leaderboard.MoveNew:
				r.Move, r.MoveText = "new", "new"
			case leaderboard.MoveUp:
				r.Move, r.MoveText = "up", "▲ "+format.Count(mv.From-e.Rank)
			case leaderboard.MoveDown:
				r.Move, r.MoveText = "down", "▼ "+format.Count(e.Rank-mv.From)
			}
		}
		if canRemove && views.Linkable(e.Member) {
			q := url.Values{"kind": {removeKind}, "conn": {v.conn}, "db": {strconv.Itoa(v.db)}, "key": {v.key}, "arg.member": {e.Member}}
			r.RemoveHref = "/actions/preview?" + q.Encode()
		}
		rows = append(rows, r)
	}
	return rows
}

// lbSource polls one leaderboard window and, while it runs, is listed for
// keyspace-notification kicks.
type lbSource struct {
	poll  func(ctx context.Context) ([]byte, error)
	close func()
}

func (s *lbSource) Poll(ctx context.Context) ([]byte, error) { return s.poll(ctx) }
func (s *lbSource) Close() error                             { s.close(); return nil }

// metaValue renders known metadata fields for people: durations and epoch
// milliseconds.
func metaValue(field, v string) string {
	if v == "" {
		return "—"
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return v
	}
	lf := strings.ToLower(field)
	switch {
	case strings.HasSuffix(lf, "ms") && strings.Contains(lf, "duration"):
		return format.Duration(time.Duration(n) * time.Millisecond)
	case strings.HasSuffix(lf, "at") && n > 1e12:
		return format.EpochMillis(n)
	}
	return format.Count(n)
}

// activityTitle labels one minute's bar of the activity chart.
func activityTitle(minutesAgo, changes int) string {
	return format.Count(int64(minutesAgo)) + " min ago: " + format.Plural(int64(changes), "change", "changes")
}
