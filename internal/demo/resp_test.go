package demo

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"strconv"
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
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	_ = rc.c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(rc.c, b.String()); err != nil {
		rc.t.Fatalf("send %q: %v", args, err)
	}
	r, err := readReply(rc.r)
	if err != nil {
		rc.t.Fatalf("reply to %q: %v", args, err)
	}
	return r
}

// readReply reads one RESP2 or RESP3 reply.
func readReply(rd *bufio.Reader) (reply, error) {
	line, err := rd.ReadString('\n')
	if err != nil {
		return reply{}, err
	}
	line = strings.TrimSuffix(line, "\r\n")
	if line == "" {
		return reply{}, fmt.Errorf("empty line")
	}
	k, rest := line[:1], line[1:]
	switch k {
	case "+", "-", ",", "(", "#":
		return reply{K: k, S: rest}, nil
	case "_":
		return reply{K: "_"}, nil
	case ":":
		n, err := strconv.ParseInt(rest, 10, 64)
		return reply{K: ":", N: n}, err
	case "$", "=", "!": // a verbatim string (=) keeps its format: "txt:…"
		n, err := strconv.Atoi(rest)
		if err != nil {
			return reply{}, err
		}
		if n < 0 {
			return reply{K: "_"}, nil
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(rd, buf); err != nil {
			return reply{}, err
		}
		if k == "!" {
			k = "-"
		}
		return reply{K: k, S: string(buf[:n])}, nil
	case "*", "%", "~", ">":
		n, err := strconv.Atoi(rest)
		if err != nil {
			return reply{}, err
		}
		if n < 0 {
			return reply{K: "_"}, nil
		}
		if k == "%" {
			n *= 2
		}
		out := reply{K: k, A: []reply{}}
		for range n {
			e, err := readReply(rd)
			if err != nil {
				return reply{}, err
			}
			out.A = append(out.A, e)
		}
		return out, nil
	}
	return reply{}, fmt.Errorf("unknown reply type %q", line)
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
