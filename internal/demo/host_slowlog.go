package demo

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/alicebob/miniredis/v2/server"
)

// slowlog is Redis's slow log, kept by the host: the client commands that
// took longer than threshold microseconds to run (negative: none; 0: all).
type slowlog struct {
	threshold int
	max       int
	nextID    int64
	// buf is a ring: logging a command costs the same however long the
	// log (an admin may set slowlog-max-len to a million). Until it holds
	// max entries it grows oldest first; then next is the oldest, the one
	// overwritten next.
	buf  []slowEntry
	next int
}

func (s *slowlog) add(e slowEntry) {
	switch {
	case s.max <= 0:
		s.buf, s.next = nil, 0
	case len(s.buf) < s.max:
		s.buf = append(s.buf, e)
		s.next = len(s.buf) % s.max
	default:
		s.buf[s.next] = e
		s.next = (s.next + 1) % s.max
	}
}

// newest is the log's n newest entries (all: n < 0), newest first.
func (s *slowlog) newest(n int) []slowEntry {
	l := len(s.buf)
	if n < 0 || n > l {
		n = l
	}
	out := make([]slowEntry, n)
	for i := range out {
		out[i] = s.buf[((s.next-1-i)%l+l)%l]
	}
	return out
}

func (s *slowlog) reset() { s.buf, s.next = nil, 0 }

type slowEntry struct {
	id         int64
	at         time.Time
	micros     int64
	args       []string
	addr, name string
}

// Redis's limits on what one entry keeps of a command.
const (
	slowMaxArgs  = 32
	slowMaxBytes = 128
)

func (s *slowlog) record(at time.Time, took time.Duration, args []string, addr, name string) {
	us := took.Microseconds()
	if s.threshold < 0 || us < int64(s.threshold) {
		return
	}
	kept := redacted(args)
	if len(kept) > slowMaxArgs {
		kept = append(kept[:slowMaxArgs-1], fmt.Sprintf("... (%d more arguments)", len(args)-slowMaxArgs+1))
	}
	for i, a := range kept {
		if len(a) > slowMaxBytes {
			kept[i] = a[:slowMaxBytes] + fmt.Sprintf("... (%d more bytes)", len(a)-slowMaxBytes)
		}
	}
	s.add(slowEntry{id: s.nextID, at: at, micros: us, args: kept, addr: addr, name: name})
	s.nextID++
}

// trim keeps the newest max entries after max changed.
func (s *slowlog) trim() {
	if len(s.buf) == 0 {
		return
	}
	kept := s.newest(max(s.max, 0))
	s.reset()
	for i := len(kept) - 1; i >= 0; i-- {
		s.add(kept[i])
	}
}

func (h *host) slowlogCmd(c *server.Peer, args []string) {
	if len(args) == 0 {
		c.WriteError("ERR wrong number of arguments for 'slowlog' command")
		return
	}
	switch strings.ToUpper(args[0]) {
	case "GET":
		count := 10
		if len(args) > 2 {
			c.WriteError(fmt.Sprintf("ERR unknown subcommand or wrong number of arguments for '%s'. Try SLOWLOG HELP.", args[0]))
			return
		}
		if len(args) == 2 {
			n, err := strconv.Atoi(args[1])
			if err != nil || n < -1 {
				c.WriteError("ERR count should be greater than or equal to -1")
				return
			}
			count = n
		}
		list := h.slow.newest(count)
		c.Block(func(w *server.Writer) {
			w.WriteLen(len(list))
			for _, e := range list {
				w.WriteLen(6)
				w.WriteInt(int(e.id))
				w.WriteInt(int(e.at.Unix()))
				w.WriteInt(int(e.micros))
				w.WriteStrings(e.args)
				w.WriteBulk(e.addr)
				w.WriteBulk(e.name)
			}
		})
	case "LEN":
		c.WriteInt(len(h.slow.buf))
	case "RESET":
		h.slow.reset()
		c.WriteOK()
	default:
		c.WriteError(fmt.Sprintf("ERR unknown subcommand '%s'. Try SLOWLOG HELP.", args[0]))
	}
}

// redacted is a copy of args with the secrets Redis 7.0 keeps out of its
// slow log replaced as it does: AUTH's arguments, HELLO's AUTH username
// and password, the value of CONFIG SET of a sensitive parameter.
func redacted(args []string) []string {
	out := append([]string(nil), args...)
	const r = "(redacted)"
	switch strings.ToUpper(out[0]) {
	case "AUTH":
		for i := 1; i < len(out); i++ {
			out[i] = r
		}
	case "HELLO":
		for i := 2; i < len(out); i++ {
			if strings.EqualFold(out[i], "AUTH") && i+2 < len(out) {
				out[i+1], out[i+2] = r, r
				i += 2
			}
		}
	case "CONFIG":
		if len(out) > 1 && strings.EqualFold(out[1], "SET") {
			for i := 2; i+1 < len(out); i += 2 {
				if sensitiveConfig[strings.ToLower(out[i])] {
					out[i+1] = r
				}
			}
		}
	}
	return out
}

// sensitiveConfig are the parameters Redis marks sensitive.
var sensitiveConfig = map[string]bool{"requirepass": true, "masterauth": true, "masteruser": true}
