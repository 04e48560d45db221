package handlers_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/gorilla/websocket"

	"github.com/keydeck/keydeck/handlers"
)

// wsAs opens a websocket watching topics with the browser's cookies and
// returns the connection (nil when refused) and the HTTP status.
func wsAs(t *testing.T, br *browser, topics ...string) (*websocket.Conn, int) {
	t.Helper()
	pu, _ := url.Parse(br.base)
	hdr := http.Header{"Origin": {br.base}}
	for _, ck := range br.c.Jar.Cookies(pu) {
		hdr.Add("Cookie", ck.Name+"="+ck.Value)
	}
	q := url.Values{"topic": topics}
	ws, res, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(br.base, "http")+"/ws?"+q.Encode(), hdr)
	if err != nil {
		if res == nil {
			t.Fatalf("dial: %v", err)
		}
		return nil, res.StatusCode
	}
	t.Cleanup(func() { ws.Close() })
	return ws, http.StatusSwitchingProtocols
}

// auditTopics names n distinct audit filters: each is its own poller.
func auditTopics(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = "audit:plain:" + url.Values{"key": {fmt.Sprintf("%s-%d", prefix, i)}}.Encode()
	}
	return out
}

// The attack of issue 8: one viewer opening websocket after websocket, each
// with 16 fresh audit filters, took every live topic of the console. Now
// they run into their own share, and another user still gets live views.
func TestOneUserCannotTakeEveryLiveTopic(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t, nil, nil)
	vera, sam := newBrowser(t, f.srv.URL), newBrowser(t, f.srv.URL)
	vera.login("vera", "right-password")
	sam.login("sam", "right-password")

	var opened []*websocket.Conn
	status := 0
	for i := range handlers.MaxLiveTopics/handlers.WSMaxTopics + 2 {
		ws, code := wsAs(t, vera, auditTopics(fmt.Sprintf("vera%d", i), handlers.WSMaxTopics)...)
		if ws == nil {
			status = code
			break
		}
		opened = append(opened, ws)
	}
	if status != http.StatusTooManyRequests || len(opened)*handlers.WSMaxTopics > handlers.MaxTopicsPerUser {
		t.Fatalf("vera opened %d websockets of %d topics, then got %d; want her own limit (429) within %d topics", len(opened), handlers.WSMaxTopics, status, handlers.MaxTopicsPerUser)
	}
	if ws, code := wsAs(t, sam, auditTopics("sam", handlers.WSMaxTopics)...); ws == nil {
		t.Fatalf("sam was refused live views (%d) after vera's attempt", code)
	}
	// Topics vera already watches cost her nothing more.
	if ws, code := wsAs(t, vera, auditTopics("vera0", 2)...); ws == nil {
		t.Fatalf("vera refused a second tab of a view she has open: %d", code)
	}
	// Closing websockets gives the share back.
	for _, ws := range opened {
		ws.Close()
	}
	waitFor(t, "vera's share to come back", func() bool {
		ws, _ := wsAs(t, vera, auditTopics("vera-again", handlers.WSMaxTopics)...)
		return ws != nil
	})
}

// Connections are capped per user too, even on one topic, and an address
// is capped over all its users.
func TestLiveSharePerConnectionAndAddress(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t, nil, nil)
	vera, sam := newBrowser(t, f.srv.URL), newBrowser(t, f.srv.URL)
	vera.login("vera", "right-password")
	sam.login("sam", "right-password")
	for i := range handlers.MaxConnsPerUser {
		if ws, code := wsAs(t, vera, "overview:main"); ws == nil {
			t.Fatalf("connection %d refused: %d", i+1, code)
		}
	}
	if ws, code := wsAs(t, vera, "overview:main"); ws != nil || code != http.StatusTooManyRequests {
		t.Fatalf("connection %d: %d, want 429", handlers.MaxConnsPerUser+1, code)
	}
	if ws, code := wsAs(t, sam, "overview:main"); ws == nil {
		t.Fatalf("sam refused: %d", code)
	}
}
