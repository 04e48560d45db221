package handlers

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/keydeck/keydeck/internal/live"
	"github.com/keydeck/keydeck/internal/route"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/action"
	"github.com/keydeck/keydeck/redisview/server"
	"github.com/keydeck/keydeck/views"
	"github.com/keydeck/keydeck/views/format"
)

// Watching a channel holds a subscription on the server for as long as
// someone looks: support and up may, a few at a time each (livelimits.go).
const watchLevel = action.Support

// pubsubPage lists one server's channels; with ?watch=NAME (and
// ?mode=pattern) it also watches a channel or pattern live.
func (a *App) pubsubPage(c echo.Context) error {
	conn, err := a.conns.Get(c.Param("conn"))
	if err != nil {
		return err
	}
	srv, err := serverOf(c, conn, route.PubSubURL)
	if err != nil {
		return err
	}
	q := c.QueryParams()
	var watch *PubSubWatchTopic
	if q.Has("watch") {
		t, err := watchOf(conn.Name, srv.Node.Addr, q)
		if err != nil {
			return err
		}
		if !a.mayWatch(identity(c).Level, t) {
			return echo.NewHTTPError(http.StatusForbidden, "Watching a channel is for support and up; your role ("+identity(c).Level.String()+") may read the counts only.")
		}
		watch = &t
	}
	filter := q.Get("pattern")
	if err := globOK("a channel filter", filter); err != nil {
		return err
	}
	chans := shared(c.Request().Context(), a, "pubsub", conn.Name, srv.Node.Addr, filter, func(ctx context.Context) server.Channels {
		return server.ReadChannels(ctx, srv.Server, filter)
	})
	vm := pubsubVM(conn.Name, srv.Node.Addr, filter, chans, a.mayWatch(identity(c).Level, PubSubWatchTopic{}))
	vm.Picker = srv.Picker
	if conn.IsCluster() {
		vm.ClusterNote = "On a cluster a message published on any node reaches every node: a watch on this node sees every channel's messages, while the counts above are this node's subscribers only."
	}
	if watch != nil {
		vm.Watch = &views.WatchVM{Name: watch.Name, Mode: watch.Mode, WSURL: route.LiveURL(watch.String()),
			Live: views.WatchLiveVM{Status: "Starting the watch…"}}
	}
	return render(c, http.StatusOK, vm, views.PubSubPage(a.page(c, "Pub/Sub · "+conn.Name, conn.Name), vm))
}

// watchOf reads a watch's parameters.
func watchOf(conn, node string, q url.Values) (PubSubWatchTopic, error) {
	t := PubSubWatchTopic{Conn: conn, Node: node, Mode: q.Get("mode"), Name: q.Get("watch")}
	if t.Mode == "" {
		t.Mode = "channel"
	}
	switch {
	case t.Mode != "channel" && t.Mode != "pattern":
		return t, fmt.Errorf("%w: mode is channel or pattern, not %q", route.ErrParam, views.ValidText(t.Mode))
	case t.Name == "":
		return t, fmt.Errorf("%w: name the channel or pattern to watch", route.ErrParam)
	case !route.Linkable(t.Name):
		return t, fmt.Errorf("%w: a channel name to watch is at most %d bytes", route.ErrParam, route.MaxLinkedName)
	case t.Mode == "pattern":
		return t, globOK("a pattern to watch", t.Name)
	}
	return t, nil
}

// Glob bounds. Redis matches a glob by backtracking (before 7.0.10 and
// 6.2.11 exponentially, CVE-2022-36021): PUBSUB CHANNELS matches it
// against every channel, a PSUBSCRIBE pattern against every message
// published. A short glob with few wildcards is what people type.
const (
	maxGlobBytes = 256
	maxGlobMeta  = 8
)

// globOK refuses a glob longer or more wild than the bounds (400).
func globOK(what, glob string) error {
	if len(glob) > maxGlobBytes {
		return fmt.Errorf("%w: %s is at most %d bytes", route.ErrParam, what, maxGlobBytes)
	}
	if n := strings.Count(glob, "*") + strings.Count(glob, "?") + strings.Count(glob, "["); n > maxGlobMeta {
		return fmt.Errorf("%w: %s has at most %d wildcards (*, ? and [), not %d", route.ErrParam, what, maxGlobMeta, n)
	}
	return nil
}

func pubsubVM(conn, node, filter string, ch server.Channels, canWatch bool) views.PubSubVM {
	vm := views.PubSubVM{Conn: conn, Node: node, FormAction: route.PubSubURL(conn), Filter: views.ValidText(filter), CanWatch: canWatch}
	if !canWatch {
		vm.WatchNote = "Watching a channel's messages is for support and up."
	}
	vm.NumPat = "patterns subscribed to (NUMPAT): " + optText(ch.NumPat, func(n int64) string { return format.Count(n) })
	if ch.Down {
		vm.Down = "Disconnected: " + ch.Err
		return vm
	}
	vm.Err = ch.Err
	if ch.Err != "" {
		return vm
	}
	vm.Count = format.Plural(int64(ch.Total), "active channel", "active channels")
	if filter != "" {
		vm.Count += " matching " + views.ValidText(filter)
	}
	if ch.Total > len(ch.Channels) {
		vm.Count += fmt.Sprintf(" (the first %d by name shown)", len(ch.Channels))
	}
	if ch.Total == 0 {
		vm.Empty = "No channel has a subscriber right now."
		if filter != "" {
			vm.Empty = "No channel with a subscriber matches this pattern."
		}
	}
	for _, c := range ch.Channels {
		row := views.ChannelRow{Name: c.Name, Subscribers: optText(c.Subscribers, func(n int64) string { return format.Count(n) })}
		if canWatch && route.Linkable(c.Name) {
			q := url.Values{"watch": {c.Name}, "mode": {"channel"}}
			if node != "" {
				q.Set(route.NodeParam, node)
			}
			row.WatchHref = route.PubSubURL(conn) + "?" + q.Encode()
		}
		vm.Channels = append(vm.Channels, row)
	}
	return vm
}

const pubsubWatchKind = "pubsubwatch"

// PubSubWatchTopic is a live watch of one channel or pattern on one
// server: "pubsubwatch:conn=…&mode=channel|pattern&name=…&node=…". Its
// poller holds the subscription; the hub closes it when the last
// watcher leaves.
type PubSubWatchTopic struct {
	Conn, Node string
	Mode       string // "channel" or "pattern"
	Name       string
}

func (t PubSubWatchTopic) String() string {
	return pubsubWatchKind + ":" + url.Values{"conn": {t.Conn}, "node": {t.Node}, "mode": {t.Mode}, "name": {t.Name}}.Encode()
}

func (PubSubWatchTopic) Level() action.Level { return watchLevel }

// A watch writes nothing: support needs its role to see messages, not to
// change anything, so a read-only console still serves it.
func (PubSubWatchTopic) readOnly() {}

func parsePubSubWatchTopic(arg string) (Topic, error) {
	q, err := url.ParseQuery(arg)
	if err != nil || !redisview.ValidName(q.Get("conn")) {
		return nil, ErrUnknownTopic
	}
	q.Set("watch", q.Get("name"))
	t, err := watchOf(q.Get("conn"), q.Get("node"), q)
	if err != nil || q.Get("mode") == "" {
		return nil, ErrUnknownTopic
	}
	return t, nil
}

func (t PubSubWatchTopic) source(a *App) (func() live.Source, error) {
	conn, err := a.conns.Get(t.Conn)
	if err != nil {
		return nil, err
	}
	return func() live.Source { return &watchSource{a: a, conn: conn, t: t} }, nil
}

// watchSource subscribes on its first poll (again after a failure, or
// once its subscription ended) and renders what the watch has received;
// Close unsubscribes.
type watchSource struct {
	a    *App
	conn *redisview.Conn
	t    PubSubWatchTopic

	mu   sync.Mutex // Poll and Close may race at shutdown
	w    *server.Watch
	lost time.Time // when an ended watch was lost, until one runs again
	gap  string    // the restart after a loss, said while this watch runs
}

func (s *watchSource) Poll(ctx context.Context) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	vm := views.WatchLiveVM{}
	if s.w != nil {
		s.w.Check(ctx)
		if st := s.w.State(); st.Ended {
			_ = s.w.Close()
			s.w, s.lost = nil, st.DownSince
		}
	}
	if s.w == nil {
		if err := s.start(ctx); err != nil {
			vm.Err = "The watch could not start: " + s.conn.SafeErr(err) + " (retrying)."
			if !s.lost.IsZero() {
				vm.Err = "Disconnected since " + format.Clock(s.lost) + ": messages published since then are missed, how many the server does not say. " + vm.Err
			}
			return renderBytes(ctx, views.WatchLive(vm, true))
		}
		if !s.lost.IsZero() {
			s.gap = "The subscription was lost at " + format.Clock(s.lost) + " and started again at " + format.Clock(s.a.now()) + ": messages published in between were missed."
			s.lost = time.Time{}
		}
	}
	st := s.w.State()
	vm.Status, vm.Err = watchStatus(st), s.gap
	switch {
	case !st.DownSince.IsZero():
		vm.Err = "Disconnected since " + format.Clock(st.DownSince) + " (" + views.ValidText(st.LastErr) + "; reconnecting): messages published meanwhile are missed, how many the server does not say."
	case st.Gaps > 0:
		vm.Err = fmt.Sprintf("The subscription was lost and came back %s, the last time from %s to %s: messages published then were missed.",
			format.Plural(int64(st.Gaps), "time", "times"), format.Clock(st.LastGap[0]), format.Clock(st.LastGap[1]))
	}
	if len(st.Messages) == 0 {
		vm.Empty = "No message yet: publish one and it appears here."
	}
	for _, m := range st.Messages {
		row := views.MessageRow{Time: format.Clock(m.Time), Channel: m.Channel, Payload: m.Payload, Size: int64(len(m.Payload) + m.More)}
		if m.More > 0 {
			row.More = "… " + format.Plural(int64(m.More), "more byte", "more bytes")
		}
		vm.Messages = append(vm.Messages, row)
	}
	return renderBytes(ctx, views.WatchLive(vm, true))
}

func watchStatus(st server.WatchState) string {
	out := fmt.Sprintf("%s received since %s", format.Plural(st.Received, "message", "messages"), format.Clock(st.Since))
	if st.Dropped > 0 {
		out += fmt.Sprintf(", %s dropped over the rate cap (%d a second)", format.Count(st.Dropped), server.WatchRate)
	}
	return out + fmt.Sprintf("; the newest %d kept.", server.WatchKeep)
}

func (s *watchSource) start(ctx context.Context) error {
	srv, err := s.conn.Server(ctx, s.t.Node)
	if err != nil {
		return err
	}
	name := s.t.String()
	w, err := server.StartWatch(ctx, srv, s.t.Name, server.WatchOptions{Pattern: s.t.Mode == "pattern", Now: s.a.now,
		OnMessage: func() { s.a.hub.Kick(name) }})
	if err != nil {
		return err
	}
	s.w = w
	return nil
}

func (s *watchSource) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.w == nil {
		return nil
	}
	err := s.w.Close()
	s.w = nil
	return err
}
