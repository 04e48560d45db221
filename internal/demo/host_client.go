package demo

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/alicebob/miniredis/v2/server"
)

// Buffers miniredis gives each connection (bufio's default sizes): what
// the demo's client holds in memory besides the command it runs.
const (
	readBufSize  = 4096
	writeBufSize = 4096
)

// clientCmd answers CLIENT ID, INFO, LIST, KILL, SETNAME and GETNAME as
// Redis 7.0 does, from the connections the host accepted.
func (h *host) clientCmd(c *server.Peer, st *peerState, args []string) {
	switch strings.ToLower(args[0]) {
	case "id":
		c.WriteInt(int(st.conn.id))
	case "getname":
		if c.ClientName == "" {
			c.WriteNull()
		} else {
			c.WriteBulk(c.ClientName)
		}
	case "setname":
		if !validClientName(args[1]) {
			c.WriteError("ERR Client names cannot contain spaces, newlines or special characters.")
			return
		}
		c.ClientName = args[1]
		c.WriteOK()
	case "info":
		writeVerbatim(c, h.clientLine(c, st, time.Now())+"\n")
	case "list":
		h.clientList(c, args[1:])
	case "kill":
		h.clientKill(c, args[1:])
	}
}

// validClientName is Redis's rule: printable ASCII without spaces.
func validClientName(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '!' || s[i] > '~' {
			return false
		}
	}
	return true
}

// clients lists the connected clients by id.
func (h *host) clients() []*peerState {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []*peerState
	for _, st := range h.peers {
		if st.conn != nil && !st.killed {
			out = append(out, st)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].conn.id < out[j].conn.id })
	return out
}

// clientLine is one client as CLIENT LIST shows it, with Redis 7.0's
// fields in its order.
func (h *host) clientLine(_ *server.Peer, st *peerState, now time.Time) string {
	cc := st.conn
	p := cc.peer
	flags := "" // in Redis's order
	if st.subscriptions() > 0 {
		flags += "P"
	}
	if st.inTx {
		flags += "x"
	}
	if st.blocked {
		flags += "b"
	}
	if flags == "" {
		flags = "N"
	}
	multi := -1
	if st.inTx {
		multi = st.queued
	}
	resp := 2
	if p.Resp3 {
		resp = 3
	}
	cmd := st.lastCmd
	if cmd == "" {
		cmd = "NULL"
	}
	totMem := readBufSize + writeBufSize + st.argvMem + st.multiMem
	return fmt.Sprintf("id=%d addr=%s laddr=%s fd=%d name=%s age=%d idle=%d flags=%s db=%d sub=%d psub=%d ssub=0 "+
		"multi=%d qbuf=0 qbuf-free=0 argv-mem=%d multi-mem=%d rbs=%d rbp=%d obl=0 oll=0 omem=0 tot-mem=%d "+
		"events=r cmd=%s user=default redir=-1 resp=%d",
		cc.id, cc.conn.RemoteAddr(), cc.conn.LocalAddr(), cc.fd, p.ClientName,
		int64(now.Sub(cc.created)/time.Second), int64(now.Sub(st.lastAt)/time.Second), flags, st.db,
		len(st.subs), len(st.psubs), multi, st.argvMem, st.multiMem, readBufSize, min(st.lastSize, readBufSize),
		totMem, cmd, resp)
}

// clientList answers CLIENT LIST [TYPE type] [ID id ...].
func (h *host) clientList(c *server.Peer, args []string) {
	var typ string
	var ids map[int64]bool
	for i := 0; i < len(args); {
		switch {
		case strings.EqualFold(args[i], "type") && i+1 < len(args):
			typ = strings.ToLower(args[i+1])
			switch typ {
			case "normal", "pubsub", "master", "replica", "slave":
			default:
				c.WriteError(fmt.Sprintf("ERR Unknown client type '%s'", args[i+1]))
				return
			}
			i += 2
		case strings.EqualFold(args[i], "id") && i+1 < len(args):
			ids = map[int64]bool{}
			for i++; i < len(args); i++ {
				n, err := strconv.ParseInt(args[i], 10, 64)
				if err != nil || n <= 0 {
					c.WriteError("ERR Invalid client ID")
					return
				}
				ids[n] = true
			}
		default:
			c.WriteError("ERR syntax error")
			return
		}
	}
	now := time.Now()
	var b strings.Builder
	for _, st := range h.clients() {
		if ids != nil && !ids[st.conn.id] || typ != "" && typ != st.clientType() {
			continue
		}
		b.WriteString(h.clientLine(c, st, now) + "\n")
	}
	writeVerbatim(c, b.String())
}

// clientType is the client's TYPE for CLIENT LIST and KILL: the demo has no
// replicas or masters.
func (st *peerState) clientType() string {
	if st.subscriptions() > 0 {
		return "pubsub"
	}
	return "normal"
}

// killFilter is CLIENT KILL's new form: every filter given must match.
type killFilter struct {
	id           int64
	addr, laddr  string
	typ, user    string
	skipMe       bool
	hasID, hasTy bool
}

// clientKill answers CLIENT KILL addr:port (old form: OK or an error) and
// CLIENT KILL filter value … (new form: the number of clients killed).
func (h *host) clientKill(c *server.Peer, args []string) {
	if len(args) == 1 {
		for _, st := range h.clients() {
			if st.conn.conn.RemoteAddr().String() == args[0] {
				h.kill(c, st)
				c.WriteOK()
				return
			}
		}
		c.WriteError("ERR No such client")
		return
	}
	f, errMsg := parseKillFilter(args)
	if errMsg != "" {
		c.WriteError(errMsg)
		return
	}
	var victims []*peerState
	for _, st := range h.clients() {
		if f.matches(c, st) {
			victims = append(victims, st)
		}
	}
	for _, st := range victims {
		h.kill(c, st)
	}
	c.WriteInt(len(victims))
}

func parseKillFilter(args []string) (killFilter, string) {
	f := killFilter{skipMe: true}
	if len(args)%2 != 0 {
		return f, "ERR syntax error"
	}
	for i := 0; i < len(args); i += 2 {
		v := args[i+1]
		switch strings.ToLower(args[i]) {
		case "id":
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n <= 0 {
				return f, "ERR client-id should be greater than 0"
			}
			f.id, f.hasID = n, true
		case "addr":
			f.addr = v
		case "laddr":
			f.laddr = v
		case "type":
			switch t := strings.ToLower(v); t {
			case "normal", "pubsub", "master", "replica", "slave":
				f.typ, f.hasTy = t, true
			default:
				return f, fmt.Sprintf("ERR Unknown client type '%s'", v)
			}
		case "user":
			if v != "default" {
				return f, fmt.Sprintf("ERR No such user '%s'", v)
			}
			f.user = v
		case "skipme":
			switch strings.ToLower(v) {
			case "yes":
				f.skipMe = true
			case "no":
				f.skipMe = false
			default:
				return f, "ERR syntax error"
			}
		default:
			return f, "ERR syntax error"
		}
	}
	return f, ""
}

func (f killFilter) matches(me *server.Peer, st *peerState) bool {
	cc := st.conn
	switch {
	case f.hasID && cc.id != f.id,
		f.addr != "" && cc.conn.RemoteAddr().String() != f.addr,
		f.laddr != "" && cc.conn.LocalAddr().String() != f.laddr,
		f.hasTy && f.typ != st.clientType(),
		f.skipMe && cc.peer == me:
		return false
	}
	return true
}

// kill closes a client's connection, as Redis does: the calling client
// after its reply, any other at once.
func (h *host) kill(me *server.Peer, st *peerState) {
	h.mu.Lock()
	st.killed = true // gone from CLIENT LIST at once, as on Redis
	h.mu.Unlock()
	if st.conn.peer == me {
		me.Close()
		return
	}
	_ = st.conn.conn.Close()
}

// hello answers HELLO [protover [AUTH user pass] [SETNAME name]] as Redis
// 7.0 does; miniredis's drops SETNAME (go-redis names its connections with
// it) and answers with a made-up id and module.
func (h *host) hello(c *server.Peer, st *peerState, args []string) {
	proto := int64(0)
	if len(args) > 0 {
		n, err := strconv.ParseInt(args[0], 10, 64)
		switch {
		case err != nil:
			c.WriteError("ERR Protocol version is not an integer or out of range")
			return
		case n < 2 || n > 3:
			c.WriteError("NOPROTO unsupported protocol version")
			return
		}
		proto = n
	}
	name, setName := "", false
	for i := 1; i < len(args); i++ {
		more := len(args) - i - 1
		switch {
		case strings.EqualFold(args[i], "AUTH") && more >= 2:
			// The demo has no passwords: its default user takes any.
			if args[i+1] != "default" {
				c.WriteError("WRONGPASS invalid username-password pair or user is disabled.")
				return
			}
			i += 2
		case strings.EqualFold(args[i], "SETNAME") && more >= 1:
			name, setName = args[i+1], true
			i++
		default:
			c.WriteError(fmt.Sprintf("ERR Syntax error in HELLO option '%s'", args[i]))
			return
		}
	}
	if setName && !validClientName(name) {
		c.WriteError("ERR Client names cannot contain spaces, newlines or special characters.")
		return
	}
	if proto != 0 {
		c.Resp3 = proto == 3
	}
	if setName {
		c.ClientName = name
	}
	resp := 2
	if c.Resp3 {
		resp = 3
	}
	c.Block(func(w *server.Writer) {
		w.WriteMapLen(7)
		w.WriteBulk("server")
		w.WriteBulk("miniredis")
		w.WriteBulk("version")
		w.WriteBulk(redisVersion)
		w.WriteBulk("proto")
		w.WriteInt(resp)
		w.WriteBulk("id")
		w.WriteInt(int(st.conn.id))
		w.WriteBulk("mode")
		w.WriteBulk("standalone")
		w.WriteBulk("role")
		w.WriteBulk("master")
		w.WriteBulk("modules")
		w.WriteLen(0)
	})
}
