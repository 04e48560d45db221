package demo

import (
	"bufio"
	"bytes"
	"github.com/alicebob/miniredis/v2"
	"sort"
	"strconv"
	"strings"

	"github.com/alicebob/miniredis/v2/server"
)

// Streams: miniredis's XINFO STREAM has two of Redis 7.0's fields, its
// XINFO GROUPS no read counter (entries-read nil, lag the stream's length)
// and its XINFO CONSUMERS a field of Redis 7.2. The host completes them from
// the stream's entries. Redis counts what a group has read, and what was
// ever added to a stream, as it goes; for a stream that never lost an entry
// both follow from the entries alone (every entry ever added is there, and
// a group has read those up to its last delivered ID). Of a stream that
// lost entries (XDEL, XTRIM, XADD … MAXLEN|MINID, or a copy of one) the
// demo cannot know them, and miniredis answers as it does.

// streamCut notes the stream keys that may have lost entries, by name in
// any database (a script's commands do not say their database).
func (h *host) noteStreamCut(cmd string, args []string) {
	if len(args) == 0 {
		return
	}
	mark := func(k string) {
		if h.streamCuts == nil {
			h.streamCuts = map[string]bool{}
		}
		h.streamCuts[k] = true
	}
	switch cmd {
	case "XDEL", "XTRIM":
		mark(args[0])
	case "XADD":
		for _, a := range args[1:] {
			if strings.EqualFold(a, "MAXLEN") || strings.EqualFold(a, "MINID") {
				mark(args[0])
			}
		}
	case "RENAME", "RENAMENX", "COPY":
		if len(args) >= 2 && h.streamCuts[args[0]] {
			mark(args[1])
		}
	case "XGROUP":
		// A new group has read nothing: Redis 7.0 reports no read counter
		// (nil) until it first delivers.
		if len(args) >= 3 && (strings.EqualFold(args[0], "CREATE") || strings.EqualFold(args[0], "DESTROY")) {
			delete(h.groupReads, args[1]+"\x00"+args[2])
		}
	case "XREADGROUP":
		h.noteGroupRead(args)
	}
}

// noteGroupRead notes the groups an XREADGROUP GROUP g c … STREAMS k… >
// delivers new entries to.
func (h *host) noteGroupRead(args []string) {
	if len(args) < 3 || !strings.EqualFold(args[0], "GROUP") {
		return
	}
	group := args[1]
	for i, a := range args {
		if !strings.EqualFold(a, "STREAMS") {
			continue
		}
		rest := args[i+1:]
		n := len(rest) / 2
		for j := range n {
			if rest[n+j] == ">" {
				if h.groupReads == nil {
					h.groupReads = map[string]bool{}
				}
				h.groupReads[rest[j]+"\x00"+group] = true
			}
		}
		return
	}
}

// xinfoAnswer is the host's answer to XINFO, or nil for miniredis's.
func (h *host) xinfoAnswer(st *peerState, args []string) func(*server.Peer, []string) {
	if len(args) < 2 || h.streamCuts[args[1]] {
		return nil
	}
	switch sub := strings.ToUpper(args[0]); {
	case sub == "STREAM" && len(args) == 2:
		return func(c *server.Peer, args []string) { h.xinfoStream(c, st, args[1]) }
	case sub == "GROUPS" && len(args) == 2:
		return func(c *server.Peer, args []string) { h.xinfoGroups(c, st, args[1]) }
	case sub == "CONSUMERS" && len(args) == 3:
		return func(c *server.Peer, args []string) {
			r := h.probeReply(c, "XINFO", "CONSUMERS", args[1], args[2])
			for i, cons := range r.A {
				r.A[i] = withoutField(cons, "inactive") // Redis 7.2's
			}
			c.Block(r.write)
		}
	}
	return nil
}

// probeReply runs a command through miniredis on the client's connection
// state (its database) and returns the reply, types kept.
func (h *host) probeReply(c *server.Peer, args ...string) reply {
	h.internal++
	p := h.probe
	p.buf.Reset()
	p.peer.Ctx, p.peer.Resp3 = c.Ctx, true
	h.srv.Dispatch(p.peer, args)
	p.peer.Flush()
	p.peer.Ctx, p.peer.Resp3 = nil, false
	r, err := readReply(bufio.NewReader(bytes.NewReader(p.buf.Bytes())))
	p.buf.Reset()
	if err != nil {
		return reply{K: "-", S: "ERR " + err.Error()}
	}
	return r
}

func withoutField(m reply, field string) reply {
	out := reply{K: m.K}
	for i := 0; i+1 < len(m.A); i += 2 {
		if m.A[i].S != field {
			out.A = append(out.A, m.A[i], m.A[i+1])
		}
	}
	return out
}

// streamIDLess compares stream IDs ("ms-seq") as Redis does.
func streamIDLess(a, b string) bool {
	parse := func(id string) (uint64, uint64) {
		ms, seq, _ := strings.Cut(id, "-")
		m, _ := strconv.ParseUint(ms, 10, 64)
		s, _ := strconv.ParseUint(seq, 10, 64)
		return m, s
	}
	am, as := parse(a)
	bm, bs := parse(b)
	return am < bm || am == bm && as < bs
}

func (h *host) xinfoGroups(c *server.Peer, st *peerState, key string) {
	r := h.probeReply(c, "XINFO", "GROUPS", key)
	if r.K == "-" {
		c.WriteError(r.S)
		return
	}
	entries, _ := h.m.DB(st.db).Stream(key)
	for i, g := range r.A {
		name, _ := g.get("name")
		last, _ := g.get("last-delivered-id")
		read, lag := groupCounters(entries, last.S, h.groupReads[key+"\x00"+name.S])
		out := reply{K: "%"}
		for j := 0; j+1 < len(g.A); j += 2 {
			v := g.A[j+1]
			switch g.A[j].S {
			case "entries-read":
				v = read
			case "lag":
				v = lag
			}
			out.A = append(out.A, g.A[j], v)
		}
		r.A[i] = out
	}
	// Redis lists groups by name (a radix tree); miniredis, in map order.
	sort.Slice(r.A, func(i, j int) bool { a, _ := r.A[i].get("name"); b, _ := r.A[j].get("name"); return a.S < b.S })
	c.Block(r.write)
}

func (h *host) xinfoStream(c *server.Peer, st *peerState, key string) {
	info := h.probeReply(c, "XINFO", "STREAM", key)
	if info.K == "-" {
		c.WriteError(info.S)
		return
	}
	groups := h.probeReply(c, "XINFO", "GROUPS", key)
	entries, _ := h.m.DB(st.db).Stream(key)
	lastID, _ := info.get("last-generated-id")
	if lastID.S == "" {
		lastID = reply{K: "$", S: "0-0"}
	}
	bulk := func(s string) reply { return reply{K: "$", S: s} }
	entry := func(i int) reply {
		if len(entries) == 0 {
			return reply{K: "_"}
		}
		e := entries[i]
		fv := reply{K: "*"}
		for _, v := range e.Values {
			fv.A = append(fv.A, bulk(v))
		}
		return reply{K: "*", A: []reply{bulk(e.ID), fv}}
	}
	first := "0-0"
	if len(entries) > 0 {
		first = entries[0].ID
	}
	n := reply{K: ":", N: int64(len(entries))}
	out := reply{K: "%", A: []reply{
		bulk("length"), n,
		bulk("last-generated-id"), lastID,
		bulk("max-deleted-entry-id"), bulk("0-0"),
		bulk("entries-added"), n,
		bulk("recorded-first-entry-id"), bulk(first),
		bulk("groups"), {K: ":", N: int64(len(groups.A))},
		bulk("first-entry"), entry(0),
		bulk("last-entry"), entry(len(entries) - 1),
	}}
	c.Block(out.write)
}

// groupCounters are a group's entries-read and lag as Redis 7.0 reports
// them for a stream that never lost an entry: a group that has delivered
// entries has read those up to its last delivered ID; one that has not has
// no read counter (nil), and its lag is then what Redis can estimate from
// where its last ID is (streamEstimateDistanceFromFirstEverEntry): nil in
// the middle of the stream.
func groupCounters(entries []miniredis.StreamEntry, last string, delivered bool) (read, lag reply) {
	null := reply{K: "_"}
	num := func(n int) reply { return reply{K: ":", N: int64(n)} }
	added := len(entries)
	if delivered {
		n := sort.Search(added, func(j int) bool { return streamIDLess(last, entries[j].ID) })
		return num(n), num(added - n)
	}
	switch {
	case added == 0:
		return null, num(0)
	case last == entries[added-1].ID:
		return null, num(0)
	case streamIDLess(entries[added-1].ID, last):
		return null, null
	case streamIDLess(last, entries[0].ID):
		return null, num(added)
	case last == entries[0].ID:
		return null, num(added - 1)
	}
	return null, null
}
