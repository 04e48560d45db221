package handlers

import (
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/gorilla/websocket"
	"github.com/labstack/echo/v4"

	"github.com/keydeck/keydeck/internal/live"
	"github.com/keydeck/keydeck/redisview/action"
)

const (
	wsWriteWait  = 10 * time.Second
	wsPongWait   = 60 * time.Second
	wsPingPeriod = wsPongWait * 9 / 10
	// wsCheckPeriod: how often an open websocket re-checks who is on the
	// other end, so a sign-out, a sign-out-everywhere, a demotion or a
	// removal from the users file closes it within seconds.
	wsCheckPeriod = 2 * time.Second
	// Browsers only send pings' pongs and the odd htmx ws-send form; a
	// client that sends more is misbehaving.
	wsMaxMessage = 4096
	wsMaxTopics  = 16
	// maxLiveTopics bounds the pollers viewers can start: each distinct
	// topic (a leaderboard window, an audit filter) is its own poller.
	maxLiveTopics = 500
)

// Hub is what live views need of the topic hub (live.Hub): one poller per
// topic, started by the first subscriber.
type Hub interface {
	Subscribe(topic string, newSource func() live.Source, sink *live.Outbox) (unsubscribe func())
	// Kick polls a topic now instead of at its next tick.
	Kick(topic string)
	Stats() live.Stats
}

var upgrader = websocket.Upgrader{
	ReadBufferSize:  1024,
	WriteBufferSize: 8192,
	CheckOrigin:     sameOrigin,
}

// sameOrigin refuses cross-site websocket hijacking: a browser always sends
// Origin, and it must name the host the page was served from.
func sameOrigin(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true // not a browser; cookies are not at stake
	}
	u, err := url.Parse(origin)
	if err != nil {
		return false
	}
	return strings.EqualFold(u.Host, r.Host)
}

// websocket subscribes the client to the topics named in ?topic= and streams
// their fragments until either side goes away.
func (a *App) websocket(c echo.Context) error {
	names := c.QueryParams()["topic"]
	if len(names) == 0 || len(names) > wsMaxTopics {
		return echo.NewHTTPError(http.StatusBadRequest, "name 1 to 16 topics with ?topic=")
	}
	factories := make(map[string]func() live.Source, len(names))
	need := action.Viewer
	running := a.hub.Stats().Subscribers
	fresh := 0
	for _, n := range names {
		t, err := ParseTopic(n)
		if err != nil {
			return err
		}
		// Topics whose fragments carry controls (undo, remove) are for the
		// levels that may use them; a read-only console shows none.
		level := t.Level()
		if !a.mayWatch(identity(c).Level, t) {
			return echo.NewHTTPError(http.StatusForbidden, "your role may not watch "+n)
		}
		f, err := a.source(t, identity(c).Holder())
		if err != nil {
			return err
		}
		need = max(need, level)
		// Subscribed under its canonical name: one poller per view,
		// however a client spells it.
		name := t.String()
		if _, ok := running[name]; !ok && factories[name] == nil {
			fresh++
		}
		factories[name] = f
	}
	if !sameOrigin(c.Request()) {
		return echo.NewHTTPError(http.StatusForbidden, "cross-origin websocket refused")
	}
	if !websocket.IsWebSocketUpgrade(c.Request()) {
		// Answered here, not by the upgrader, so it is a page (or JSON)
		// like every other error.
		return echo.NewHTTPError(http.StatusBadRequest, "This address is the live views' websocket: open it with a websocket client.")
	}
	// The user's and the address's share first, so that one viewer runs
	// into their own limit long before everyone's.
	release, err := a.shares.take(a.shares.limits(a, c), slices.Collect(maps.Keys(factories)))
	if errors.Is(err, errWatchShare) {
		return echo.NewHTTPError(http.StatusTooManyRequests, fmt.Sprintf("You already watch %d channels or patterns; close one of those pages, then reload.", maxWatchesPerUser))
	}
	if err != nil {
		return echo.NewHTTPError(http.StatusTooManyRequests, "You have too many live views open; close some tabs, then reload.")
	}
	defer release()
	if fresh > 0 && len(running)+fresh > maxLiveTopics {
		return echo.NewHTTPError(http.StatusServiceUnavailable, "Too many live views are open on this console; try again later.")
	}
	ws, err := upgrader.Upgrade(c.Response(), c.Request(), nil)
	if err != nil {
		return nil // the upgrader has answered the client
	}
	out := live.NewOutbox()
	var unsubs []func()
	for n, f := range factories {
		unsubs = append(unsubs, a.hub.Subscribe(n, f, out))
	}
	// The identity is checked again every wsCheckPeriod: a signed-out,
	// demoted or removed user, or an expired session, stops receiving
	// within seconds.
	still := func() bool {
		id := a.whoIs(c)
		return id.Signed() && id.Level >= need
	}
	serveSocket(ws, out, a.ctx.Done(), wsCheckPeriod, still)
	for _, u := range unsubs {
		u()
	}
	return nil
}

// serveSocket runs a websocket's two pumps until the peer goes, the
// writer stops (shutdown, a failed write, still saying no) or both. It
// returns only once the writer has stopped: still may read the request's
// echo.Context, which echo hands to the next request as soon as the
// handler returns.
func serveSocket(ws *websocket.Conn, out *live.Outbox, shutdown <-chan struct{}, check time.Duration, still func() bool) {
	done, pumped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(pumped)
		writePump(ws, out, done, shutdown, check, still)
	}()
	readPump(ws)
	close(done)
	<-pumped
}

// readPump consumes control frames and discards messages, so pongs are seen
// and a dead peer is noticed by the read deadline.
func readPump(ws *websocket.Conn) {
	defer ws.Close()
	ws.SetReadLimit(wsMaxMessage)
	_ = ws.SetReadDeadline(time.Now().Add(wsPongWait))
	ws.SetPongHandler(func(string) error { return ws.SetReadDeadline(time.Now().Add(wsPongWait)) })
	for {
		if _, _, err := ws.ReadMessage(); err != nil {
			return
		}
	}
}

// writePump is the connection's only writer. It drains the coalescing outbox,
// so a slow browser receives the newest state, never a backlog.
func writePump(ws *websocket.Conn, out *live.Outbox, done, shutdown <-chan struct{}, checkEvery time.Duration, allowed func() bool) {
	ping := time.NewTicker(wsPingPeriod)
	check := time.NewTicker(checkEvery)
	defer func() {
		ping.Stop()
		check.Stop()
		ws.Close()
	}()
	for {
		select {
		case <-shutdown:
			_ = ws.SetWriteDeadline(time.Now().Add(time.Second))
			_ = ws.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseGoingAway, "server shutting down"))
			return
		case <-done:
			_ = ws.SetWriteDeadline(time.Now().Add(time.Second))
			_ = ws.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""))
			return
		case <-out.Ready():
			for _, m := range out.Take() {
				_ = ws.SetWriteDeadline(time.Now().Add(wsWriteWait))
				if err := ws.WriteMessage(websocket.TextMessage, m.Payload); err != nil {
					return
				}
			}
		case <-check.C:
			if !allowed() {
				_ = ws.SetWriteDeadline(time.Now().Add(time.Second))
				_ = ws.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.ClosePolicyViolation, "sign in again"))
				return
			}
		case <-ping.C:
			_ = ws.SetWriteDeadline(time.Now().Add(wsWriteWait))
			if err := ws.WriteMessage(websocket.PingMessage, nil); err != nil {
				return
			}
		}
	}
}
