package demo

import (
	"strconv"
	"strings"
	"time"

	"github.com/alicebob/miniredis/v2/server"
)

// serve runs one client command, under the gate, and keeps what Redis
// keeps of it: the client's last command and idle time, the slow log, the
// latency monitor's "command" events and the command and error counts of
// INFO commandstats and errorstats, each from its measured duration and
// its reply.
func (h *host) serve(c *server.Peer, st *peerState, cmd string, args []string) {
	queued := st.inTx && cmd != "EXEC" && cmd != "DISCARD"
	start := time.Now()
	name := h.table.fullName(cmd, args)
	st.lastAt, st.lastCmd = start, name
	st.argvMem, st.lastSize = len(cmd), respSize(cmd, args)
	for _, a := range args {
		st.argvMem += len(a)
	}
	if queued {
		st.queued++
		st.multiMem += st.argvMem
	}
	h.noteStreamCut(cmd, args)
	pc := st.conn.pc
	sent := pc.sentName(cmd)
	pc.watch()
	full := h.run(c, st, cmd, args)
	c.Flush()
	took := time.Since(start)
	head := pc.written()
	st.argvMem = 0
	h.stats.record(name, took, head, queued)
	if !queued && name != "" {
		if cmd != "EXEC" { // Redis's skip_slowlog: its commands are logged, not it
			full[0] = sent
			h.slow.record(start, took, full, st.conn.conn.RemoteAddr().String(), c.ClientName)
		}
		event := "command"
		if h.table.byFullName(name).flags["fast"] {
			event = "fast-command"
		}
		h.latency.observe(event, start, took)
	}
	h.track(st, cmd, args)
}

// track follows the state CLIENT LIST shows that commands change:
// transactions and subscriptions.
func (h *host) track(st *peerState, cmd string, args []string) {
	switch cmd {
	case "MULTI":
		if len(args) == 0 {
			st.inTx, st.queued, st.multiMem = true, 0, 0
		}
	case "EXEC", "DISCARD":
		if len(args) == 0 {
			st.inTx, st.queued, st.multiMem = false, 0, 0
		}
	case "SUBSCRIBE", "PSUBSCRIBE", "UNSUBSCRIBE", "PUNSUBSCRIBE":
		if st.inTx {
			return
		}
		set := &st.subs
		if cmd[0] == 'P' {
			set = &st.psubs
		}
		if *set == nil {
			*set = map[string]bool{}
		}
		if strings.HasSuffix(cmd, "UNSUBSCRIBE") {
			if len(args) == 0 {
				clear(*set)
			}
			for _, a := range args {
				delete(*set, a)
			}
			return
		}
		for _, a := range args {
			(*set)[a] = true
		}
	}
}

// respSize is the size of a command as a client sends it (RESP).
func respSize(cmd string, args []string) int {
	n := len(strconv.Itoa(len(args)+1)) + 3
	for _, a := range append([]string{cmd}, args...) {
		n += len(strconv.Itoa(len(a))) + 3 + len(a) + 2
	}
	return n
}

// run answers a command or has miniredis run it; it returns the command as
// run.
func (h *host) run(c *server.Peer, st *peerState, cmd string, args []string) []string {
	full := append([]string{cmd}, args...)
	if !st.inTx {
		if answer := h.answerer(c, st, cmd, args); answer != nil {
			if h.table.checkCall(c, cmd, args) {
				answer(c, args)
			}
			h.answered++
			return full
		}
	}
	if cmd == "SELECT" && !st.inTx && len(args) == 1 {
		// Redis has `databases` of them; miniredis takes any index.
		if n, err := strconv.Atoi(args[0]); err == nil && n >= databases {
			c.WriteError("ERR DB index is out of range")
			h.answered++
			return full
		} else if err == nil && n >= 0 {
			st.db = n
		}
	}
	if cmd == "MEMORY" {
		stripped, errMsg := memoryArgs(args)
		switch {
		case errMsg == "":
			args = stripped
		case !st.inTx:
			c.WriteError(errMsg)
			h.answered++
			return full
		}
	}
	if name := h.table.fullName(cmd, args); !st.inTx && name != "" && h.maxMemory > 0 && h.usedMem > h.maxMemory &&
		h.table.byFullName(name).flags["denyoom"] {
		// maxmemory-policy noeviction, the only one the demo has.
		c.WriteError("OOM command not allowed when used memory > 'maxmemory'.")
		h.answered++
		return full
	}
	args = scanMatchArgs(cmd, args)
	if !st.inTx {
		h.countLookups(c, cmd, args)
	}
	st.running = true
	h.srv.Dispatch(c, append([]string{cmd}, args...))
	st.running = false
	return full
}

// answerer is the host's own answer to a command, or nil when miniredis
// answers it.
func (h *host) answerer(c *server.Peer, st *peerState, cmd string, args []string) func(*server.Peer, []string) {
	switch cmd {
	case "INFO":
		return h.info
	case "CONFIG":
		return h.config
	case "SLOWLOG":
		return h.slowlogCmd
	case "LATENCY":
		return h.latencyCmd
	case "COMMAND":
		return h.commandCmd
	case "CLUSTER":
		return func(c *server.Peer, _ []string) { c.WriteError("ERR This instance has cluster support disabled") }
	case "CLIENT":
		return func(c *server.Peer, args []string) { h.clientCmd(c, st, args) }
	case "HELLO":
		return func(c *server.Peer, args []string) { h.hello(c, st, args) }
	case "XINFO":
		return h.xinfoAnswer(st, args)
	case "PUBSUB":
		if len(args) == 1 && strings.EqualFold(args[0], "NUMPAT") {
			// Redis counts the patterns; miniredis, the subscriptions.
			return func(c *server.Peer, _ []string) { _, n := h.pubsubCounts(); c.WriteInt(n) }
		}
	case "MEMORY":
		if len(args) > 0 && (strings.EqualFold(args[0], "STATS") || strings.EqualFold(args[0], "DOCTOR")) {
			return h.memoryCmd
		}
	case "OBJECT":
		if len(args) == 2 && strings.EqualFold(args[0], "ENCODING") {
			return func(c *server.Peer, args []string) {
				h.countLookups(c, cmd, args)
				h.objectEncoding(c, st.db, args[1])
			}
		}
	}
	return nil
}

// block runs a blocking command (BLPOP, XREAD …) outside the gate, since
// it waits for another client's write, and keeps what CLIENT LIST and
// INFO clients show of it: the client is blocked (flag b) while it waits.
func (h *host) block(c *server.Peer, st *peerState, cmd string, args []string) bool {
	st.conn.pc.sentName(cmd)
	if st.inTx {
		return false // queued: it will not block
	}
	h.gate.Lock()
	st.lastAt, st.lastCmd, st.blocked = time.Now(), h.table.fullName(cmd, args), true
	if cmd == "XREADGROUP" {
		h.noteGroupRead(args)
	}
	h.gate.Unlock()
	st.running = true
	h.srv.Dispatch(c, append([]string{cmd}, args...))
	st.running = false
	h.gate.Lock()
	st.blocked = false
	h.gate.Unlock()
	return true
}

// blockedClients is INFO's blocked_clients.
func (h *host) blockedClients() int {
	n := 0
	for _, st := range h.clients() {
		if st.blocked {
			n++
		}
	}
	return n
}
