package handlers_test

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/internal/route"
	"github.com/keydeck/keydeck/internal/server"
	cmdconsole "github.com/keydeck/keydeck/redisview/console"
)

// Console commands draw from the connection's request budget, as searches
// do (review M6): at 1 unit/s, a second command right after the first is
// refused as busy (429, Retry-After), not run.
func TestConsoleDrawsFromTheBudget(t *testing.T) {
	t.Parallel()
	rs := redistest.Start(t)
	f := startConsole(t, rs, server.Config{SearchRate: 1}, nil).up(t)
	b := newBrowser(t, f.srv.URL)
	before, _ := rs.CommandCalls(t.Context())
	run := func() (int, http.Header, string) {
		tok := b.csrf(route.ConsoleURL("main"))
		return b.do(http.MethodPost, route.ConsoleURL("main"), url.Values{"_csrf": {tok}, "command": {"GET k"}, "db": {"0"}})
	}
	// A line of more arguments than the console takes is refused before
	// it draws anything: it would spend the connection's budget for
	// everyone (review C L3).
	long := "MGET" + strings.Repeat(" k", cmdconsole.MaxArgs)
	if code, _, body := b.do(http.MethodPost, route.ConsoleURL("main"), url.Values{"_csrf": {b.csrf(route.ConsoleURL("main"))}, "command": {long}, "db": {"0"}}); code != http.StatusBadRequest {
		t.Fatalf("a line of %d arguments: %d %s", cmdconsole.MaxArgs+1, code, consoleAnswer(body))
	}
	if code, _, body := run(); code != http.StatusOK {
		t.Fatalf("first GET: %d %s", code, consoleAnswer(body))
	}
	code, hdr, body := run()
	secs, err := strconv.Atoi(hdr.Get("Retry-After"))
	if code != http.StatusTooManyRequests || err != nil || secs < 1 || !strings.Contains(body, "Try again in "+strconv.Itoa(secs)+" s") {
		t.Fatalf("second GET at once: %d, Retry-After %q, %s", code, hdr.Get("Retry-After"), consoleAnswer(body))
	}
	after, _ := rs.CommandCalls(t.Context())
	if n := after["get"] - before["get"]; n != 1 {
		t.Fatalf("GET ran %d times, want once (the refused one not sent)", n)
	}
}
