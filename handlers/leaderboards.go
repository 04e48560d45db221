package handlers

import (
	"context"
	"errors"
	"fmt"
	"github.com/keydeck/keydeck/views/chart"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/keydeck/keydeck/internal/live"
	"github.com/keydeck/keydeck/internal/route"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/action"
	"github.com/keydeck/keydeck/redisview/leaderboard"
	"github.com/keydeck/keydeck/redisview/schema"
	"github.com/keydeck/keydeck/views"
	"github.com/keydeck/keydeck/views/format"
)

const (
	removeKind   = action.KindRemoveLeaderboardEntry
	coldStartMsg = "The application may rebuild this leaderboard from its database on a cache miss (cold start): an entry removed here can come back unless it is removed there too."
)

var lbNOptions = []int64{10, 25, 50, 100, 200, 500}

// LeaderboardIndex is what the leaderboard list needs of the key index
// (leaderboard.Index): each connection's leaderboard keys, whether there
// are more than it keeps, waiting up to wait for a first scan.
type LeaderboardIndex interface {
	Refs(c *redisview.Conn, wait time.Duration) ([]leaderboard.Ref, bool, error)
}

// KeyWatch is told which keys a live leaderboard shows, so that keyspace
// notifications on them kick its topic (redisview.KeyWatch).
type KeyWatch interface {
	Add(conn string, db int, key, topic string)
	Remove(conn string, db int, key, topic string)
}

// windowID names a window for the move tracker.
func windowID(w route.Window) leaderboard.WindowID {
	return leaderboard.WindowID{Conn: w.Conn, DB: w.DB, Key: w.Key, Start: w.Start, N: w.N}
}

func (a *App) leaderboardList(c echo.Context) error {
	vm := a.lbListVM(c.Request().Context())
	return render(c, http.StatusOK, vm, views.LeaderboardListPage(a.page(c, "Leaderboards", ""), vm))
}

func (a *App) lbListVM(ctx context.Context) views.LeaderboardListVM {
	vm := views.LeaderboardListVM{WSURL: route.LiveURL(LeaderboardsTopic{}.String())}
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
				it.Href = route.Window{Conn: conn.Name, DB: b.DB, Key: b.Key, N: route.DefaultRows}.URL()
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

const leaderboardsKind = "leaderboards"

// LeaderboardsTopic is the live list of every leaderboard:
// "leaderboards:all".
type LeaderboardsTopic struct{}

func (LeaderboardsTopic) String() string      { return leaderboardsKind + ":all" }
func (LeaderboardsTopic) Level() action.Level { return action.Viewer }

func parseLeaderboardsTopic(arg string) (Topic, error) {
	if arg != "all" {
		return nil, ErrUnknownTopic
	}
	return LeaderboardsTopic{}, nil
}

func (LeaderboardsTopic) source(a *App) (func() live.Source, error) {
	return func() live.Source {
		return live.SourceFunc(func(ctx context.Context) ([]byte, error) {
			return renderBytes(ctx, views.LeaderboardListLive(a.lbListVM(ctx), true))
		})
	}, nil
}

// leaderboardPage shows one leaderboard window, a member lookup, and the
// live rows.
func (a *App) leaderboardPage(c echo.Context) error {
	conn, db, err := a.connDB(c)
	if err != nil {
		return err
	}
	v, err := route.ParseWindow(conn.Name, db, c.QueryParams())
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	canRemove := a.canRemove(actor(c))
	w, err := leaderboard.Read(ctx, conn, v.DB, v.Key, v.Start, v.N)
	if errors.Is(err, leaderboard.ErrSensitive) {
		return err // a refusal, not a read that failed: no page at all
	}
	if err == nil && w.Size == 0 {
		// Redis keeps no empty sorted set: the key is missing.
		return missingKey(conn, db, v.Key, "leaderboard")
	}
	if err != nil {
		if st := conn.Status(); !st.Up && !st.Checked.IsZero() {
			err = fmt.Errorf("%s is %s: %w", conn.Name, statusText(st), err)
		}
	}
	vm := a.lbVM(v, w, err, nil, canRemove, a.lbTracker.Peek(windowID(v)))
	if m := c.QueryParam("member"); m != "" {
		vm.LookupQuery = m
		lw, rank, found, err := leaderboard.Lookup(ctx, conn, v.DB, v.Key, m, 5)
		if err != nil {
			return err
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
	return render(c, http.StatusOK, vm, views.LeaderboardPage(a.page(c, "Leaderboard", conn.Name), vm))
}

func (a *App) canRemove(act action.Actor) bool {
	return a.actions != nil && !a.auth.ReadOnly && a.actions.Allowed(act, removeKind)
}

const leaderboardKind = "lb"

// LeaderboardTopic is one window of a leaderboard, "lb:MODE:<window>": one
// poller per window and mode. The remove mode's rows carry remove links,
// for support and up.
type LeaderboardTopic struct {
	Window route.Window
	Remove bool
}

func (t LeaderboardTopic) String() string {
	mode := "plain"
	if t.Remove {
		mode = "remove"
	}
	return leaderboardKind + ":" + modeArg(mode, t.Window.Values())
}

func (t LeaderboardTopic) Level() action.Level {
	if t.Remove {
		return action.Support
	}
	return action.Viewer
}

func parseLeaderboardTopic(arg string) (Topic, error) {
	mode, q, err := parseModeArg(arg, "plain", "remove")
	if err != nil {
		return nil, err
	}
	db, err := route.ParseDB(q.Get("db"))
	if err != nil {
		return nil, err
	}
	w, err := route.ParseWindow(q.Get("conn"), db, q)
	if err != nil {
		return nil, err
	}
	return LeaderboardTopic{Window: w, Remove: mode == "remove"}, nil
}

// source polls the window and, while it runs, lists it for
// keyspace-notification kicks.
func (t LeaderboardTopic) source(a *App) (func() live.Source, error) {
	v := t.Window
	conn, err := a.conns.Get(v.Conn)
	if err != nil {
		return nil, err
	}
	if conn.Sensitive(v.DB, v.Key) {
		return nil, fmt.Errorf("%w %q: sensitive family", ErrUnknownTopic, t.String())
	}
	topic := t.String()
	return func() live.Source {
		st := a.lbTracker.Get(windowID(v))
		a.keyWatch.Add(conn.Name, v.DB, v.Key, topic)
		return &lbSource{
			poll: func(ctx context.Context) ([]byte, error) {
				w, err := leaderboard.Read(ctx, conn, v.DB, v.Key, v.Start, v.N)
				var marks map[string]leaderboard.Move
				if err == nil {
					marks = st.Observe(w.Entries, a.now())
				}
				return renderBytes(ctx, views.LeaderboardLive(a.lbVM(v, w, err, marks, t.Remove, st), true))
			},
			close: func() { a.keyWatch.Remove(conn.Name, v.DB, v.Key, topic) },
		}
	}, nil
}

func (a *App) lbVM(v route.Window, w leaderboard.Window, err error, marks map[string]leaderboard.Move, canRemove bool, st *leaderboard.Tracked) views.LeaderboardVM {
	vm := views.LeaderboardVM{Conn: v.Conn, DB: v.DB, Key: v.Key, Family: w.Family, Start: v.Start, N: v.N, NOptions: rowOptions(w.Retained, v.N),
		WSURL: route.LiveURL(LeaderboardTopic{Window: v, Remove: canRemove}.String()), Size: format.Count(w.Size), MetaTitles: metaTitles(w), CanRemove: canRemove,
		Note: coldStartMsg, PageURL: route.LeaderboardPath(v.Conn, v.DB)}
	if err != nil {
		vm.Err = "Cannot read the leaderboard: " + err.Error()
	}
	// The page answers 404 for a missing key; a live window whose key
	// vanishes says so instead of "Ranks 1–0 of 0".
	vm.Gone = err == nil && w.Size == 0
	if v.Start > 0 {
		vm.Prev = v.At(max(0, v.Start-v.N)).URL()
	}
	if v.Start+v.N < w.Size {
		vm.Next = v.At(v.Start + v.N).URL()
	}
	vm.Rows = a.lbRows(v, w, marks, canRemove)
	vm.Activity, vm.ActivityNote = activityChart(st, a.now())
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
	if retained > 0 && retained < route.MaxRows && !slices.Contains(out, int64(retained)) {
		out = append(out, int64(retained))
	}
	if !slices.Contains(out, current) {
		out = append(out, current)
		slices.Sort(out)
	}
	return out
}

func (a *App) lbRows(v route.Window, w leaderboard.Window, marks map[string]leaderboard.Move, canRemove bool) []views.LeaderboardRow {
	var rows []views.LeaderboardRow
	for _, e := range w.Entries {
		r := views.LeaderboardRow{Rank: format.Count(e.Rank + 1), Member: e.Member, Score: format.Score(e.Score)}
		for _, f := range w.MetaFields {
			r.Meta = append(r.Meta, metaCell(w.MetaFormats[f], e.Meta[f]))
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
			r.RemoveHref = route.Action{Kind: removeKind, Conn: v.Conn, DB: v.DB, Key: v.Key, Args: map[string]string{action.ArgMember: e.Member}}.PreviewURL()
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

// metaTitles titles the metadata columns as the pack labels them, by
// field name where it gives no label.
func metaTitles(w leaderboard.Window) []string {
	var out []string
	for _, f := range w.MetaFields {
		if l := w.MetaLabels[f]; l != "" {
			f = l
		}
		out = append(out, f)
	}
	return out
}

// metaCell is metaValue for a leaderboard's cell, saying whether the
// value became a time (shown in the browser's zone).
func metaCell(meaning, v string) views.MetaCell {
	shown := metaValue(meaning, v)
	return views.MetaCell{Text: shown, Time: meaning == schema.MetaEpochMs && shown != v && v != ""}
}

// metaValue shows a metadata value by the meaning the pack gives its field
// (schema.MetaFormats): a duration, a date, a count; as it is otherwise,
// or when it does not parse as what the pack says.
func metaValue(meaning, v string) string {
	if v == "" {
		return "—"
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return v
	}
	switch meaning {
	case schema.MetaDurationMs:
		return format.Duration(time.Duration(n) * time.Millisecond)
	case schema.MetaEpochMs:
		return format.EpochMillis(n)
	case schema.MetaCount:
		return format.Count(n)
	}
	return v
}

// activityChart is the window's score changes per minute since the
// live topic first read it (at most the last hour): bars from that
// minute on, so unwatched minutes are not drawn as quiet ones.
func activityChart(st *leaderboard.Tracked, now time.Time) (chart.Chart, string) {
	spec := chart.Spec{TestID: "lb-activity-chart", Title: "Score changes per minute", Units: chart.Count("changes/min"),
		End: now, Span: 5 * time.Minute, Bars: time.Minute, ZeroBased: true,
		Empty: "Not watched yet: counting starts when this board is first watched live (keep this page open)."}
	var since time.Time
	if st != nil {
		since = st.Activity().Since()
	}
	if since.IsZero() {
		return chart.Build(spec), ""
	}
	counts := st.Activity().PerMinute(now)
	first := since.Truncate(time.Minute)
	cur := now.Truncate(time.Minute)
	var pts []chart.Point
	for i, n := range counts {
		at := cur.Add(-time.Duration(len(counts)-1-i) * time.Minute)
		if !at.Before(first) {
			pts = append(pts, chart.Point{At: at, V: float64(n)})
		}
	}
	// Five minutes at least, so the first bars are not a wall; an hour at most.
	spec.Span = min(max(now.Sub(first), spec.Span), time.Hour)
	ago := "under a minute"
	if d := now.Sub(since); d >= time.Minute {
		ago = format.Duration(d.Truncate(time.Minute))
	}
	note := "Counted by Keydeck's live poller in the rows it reads, for everyone watching, since it was first watched " + ago + " ago."
	return chart.Build(spec, chart.Series{Class: chart.Palette[0], Points: pts}), note
}
