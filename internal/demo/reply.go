package demo

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/alicebob/miniredis/v2/server"
)

// reply is one RESP3 reply as a real Redis server wrote it, kept with its
// types (a map stays a map, a set a set, a status a status) so that the demo
// can write it again to a RESP3 client as it was, and to a RESP2 client as
// Redis converts it (maps flattened, sets as arrays).
type reply struct {
	// K is the RESP3 type byte: + $ : * % ~ _ ,
	K string  `json:"k"`
	S string  `json:"s,omitempty"`
	N int64   `json:"n,omitempty"`
	A []reply `json:"a,omitempty"`
}

// write writes r to w, which knows the client's protocol.
func (r reply) write(w *server.Writer) {
	switch r.K {
	case "-":
		w.WriteError(r.S)
	case "+":
		w.WriteInline(r.S)
	case "$":
		w.WriteBulk(r.S)
	case ":":
		w.WriteInt(int(r.N))
	case ",":
		f, _ := strconv.ParseFloat(r.S, 64)
		w.WriteFloat(f)
	case "_":
		w.WriteNull()
	case "%":
		w.WriteMapLen(len(r.A) / 2)
		for _, e := range r.A {
			e.write(w)
		}
	case "~":
		w.WriteSetLen(len(r.A))
		for _, e := range r.A {
			e.write(w)
		}
	default:
		w.WriteLen(len(r.A))
		for _, e := range r.A {
			e.write(w)
		}
	}
}

// get returns the value of a map reply's field, or false.
func (r reply) get(field string) (reply, bool) {
	if r.K != "%" {
		return reply{}, false
	}
	for i := 0; i+1 < len(r.A); i += 2 {
		if r.A[i].S == field {
			return r.A[i+1], true
		}
	}
	return reply{}, false
}

// str returns a string reply's text ("" for other types).
func (r reply) str() string { return r.S }

// writeVerbatim writes text as Redis writes its reports (INFO, CLIENT LIST,
// the doctors): a verbatim string of format txt to a RESP3 client, a bulk
// string to a RESP2 one.
func writeVerbatim(c *server.Peer, text string) {
	if !c.Resp3 {
		c.WriteBulk(text)
		return
	}
	c.Block(func(w *server.Writer) {
		w.WriteRaw("=" + strconv.Itoa(len(text)+4) + "\r\ntxt:" + text + "\r\n")
	})
}

// readReply reads one RESP2 or RESP3 reply: the host reads miniredis's
// replies it completes, the tests the servers' replies. An error is K "-".
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
