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
	entries   []slowEntry // newest first
}

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
	s.entries = append([]slowEntry{{id: s.nextID, at: at, micros: us, args: kept, addr: addr, name: name}}, s.entries...)
	s.nextID++
	s.trim()
}

func (s *slowlog) trim() {
	if len(s.entries) > s.max {
		s.entries = s.entries[:s.max]
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
		list := h.slow.entries
		if count >= 0 && count < len(list) {
			list = list[:count]
		}
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
		c.WriteInt(len(h.slow.entries))
	case "RESET":
		h.slow.entries = nil
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
