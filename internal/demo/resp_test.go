package demo

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

// rawConn is a client that keeps a reply's RESP types (go-redis folds a
// map into a Go map and loses its order, and a set into a slice), so tests
// compare what the demo writes with what Redis writes, type by type.
type rawConn struct {
	t *testing.T
	c net.Conn
	r *bufio.Reader
}

// dialRaw connects to addr speaking RESP proto (2 or 3).
func dialRaw(t *testing.T, addr string, proto int) *rawConn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	t.Cleanup(func() { _ = c.Close() })
	rc := &rawConn{t: t, c: c, r: bufio.NewReader(c)}
	if proto == 3 {
		if r := rc.do("HELLO", "3"); r.K != "%" {
			t.Fatalf("HELLO 3 on %s: %+v", addr, r)
		}
	}
	return rc
}

// do sends one command and reads its reply; an error reply has K "-".
func (rc *rawConn) do(args ...string) reply {
	rc.t.Helper()
	rc.send(args...)
	r, err := readReply(rc.r)
	if err != nil {
		rc.t.Fatalf("reply to %q: %v", args, err)
	}
	return r
}

// send sends one command; its reply is for readNext.
func (rc *rawConn) send(args ...string) {
	rc.t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	_ = rc.c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(rc.c, b.String()); err != nil {
		rc.t.Fatalf("send %q: %v", args, err)
	}
}

// readNext reads a reply nothing was sent for (a published message).
func (rc *rawConn) readNext() reply {
	rc.t.Helper()
	_ = rc.c.SetDeadline(time.Now().Add(10 * time.Second))
	r, err := readReply(rc.r)
	if err != nil {
		rc.t.Fatalf("read: %v", err)
	}
	return r
}
