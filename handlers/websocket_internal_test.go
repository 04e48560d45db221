package handlers

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/keydeck/keydeck/internal/live"
)

// A websocket handler returns only after its writer has stopped: the
// writer's identity check reads the request's echo.Context, which echo
// gives to the next request once the handler returns (a data race the
// race detector caught in the browser tests).
func TestServeSocketReturnsAfterTheWriterStops(t *testing.T) {
	t.Parallel()
	entered := make(chan struct{}, 1)
	var checking atomic.Bool // set while still runs
	served := make(chan bool, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := upgrader.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		still := func() bool {
			checking.Store(true)
			defer checking.Store(false)
			select {
			case entered <- struct{}{}:
			default:
			}
			time.Sleep(200 * time.Millisecond) // the peer leaves meanwhile
			return true
		}
		serveSocket(ws, live.NewOutbox(), make(chan struct{}), 5*time.Millisecond, still)
		served <- checking.Load()
	}))
	defer srv.Close()
	h := http.Header{"Origin": {srv.URL}}
	c, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(srv.URL, "http"), h)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-entered:
	case <-time.After(5 * time.Second):
		t.Fatal("the identity was never checked")
	}
	c.Close() // the peer goes while the check runs
	select {
	case stillRunning := <-served:
		if stillRunning {
			t.Fatal("serveSocket returned while the writer was still checking the identity")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("serveSocket never returned")
	}
}
