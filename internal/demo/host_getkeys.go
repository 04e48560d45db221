package demo

import (
	"strconv"
	"strings"

	"github.com/alicebob/miniredis/v2/server"
)

// keyRef is one key argument found by COMMAND GETKEYS: its position in the
// command (the name at 0) and its flags as COMMAND INFO writes them.
type keyRef struct {
	pos   int
	flags reply
}

// hasKeys is Redis's doesCommandHaveKeys: a key spec that names keys.
func (c *command) hasKeys() bool {
	for _, s := range c.specs {
		if !s.flags["not_key"] {
			return true
		}
	}
	return false
}

// keys finds the key arguments of argv (argv[0] the command's name) as
// Redis's getKeysFromCommandWithSpecs does: from the key specs, unless one
// of them cannot be followed (unknown, incomplete, a bad count), in which
// case Redis falls back to the command's own key finder. Of the commands
// the demo has, only SET needs one (its flags depend on GET); for the
// others Redis's finder yields no keys where the specs fail, as here.
func (c *command) keys(argv []string) []keyRef {
	if c.name == "set" {
		flags := []string{"OW", "update"}
		for _, a := range argv[3:] {
			if strings.EqualFold(a, "get") {
				flags = []string{"RW", "access", "update"}
				break
			}
		}
		f := reply{K: "~"}
		for _, s := range flags {
			f.A = append(f.A, reply{K: "+", S: s})
		}
		return []keyRef{{pos: 1, flags: f}}
	}
	var out []keyRef
	argc := len(argv)
	for i, s := range c.specs {
		if s.flags["not_key"] {
			continue
		}
		first, last, step, ok := s.bounds(argv)
		if !ok {
			return nil
		}
		if first == 0 {
			continue // the keyword is not there: no keys of this spec
		}
		flags, _ := c.entry.A[8].A[i].get("flags")
		for p := first; p <= last; p += step {
			if p >= argc || p < first {
				continue
			}
			out = append(out, keyRef{pos: p, flags: flags})
		}
		if s.flags["incomplete"] {
			return nil
		}
	}
	return out
}

// bounds is where spec s's keys are in argv: first (0 when its keyword is
// absent), last and the step; ok is false where Redis takes the spec for
// invalid.
func (s keySpec) bounds(argv []string) (first, last, step int, ok bool) {
	argc := len(argv)
	switch s.bsType {
	case "index":
		first = s.index
	case "keyword":
		start, end := s.startfrom, 1
		if s.startfrom > 0 {
			end = argc - 1
		} else {
			start = argc + s.startfrom
		}
		for i := start; i != end; {
			if i >= argc || i < 1 {
				break
			}
			if strings.EqualFold(argv[i], s.keyword) {
				first = i + 1
				break
			}
			if start <= end {
				i++
			} else {
				i--
			}
		}
		if first == 0 {
			return 0, 0, 0, true
		}
	default:
		return 0, 0, 0, false
	}
	switch s.fkType {
	case "range":
		step = s.keystep
		switch {
		case s.lastkey >= 0:
			last = first + s.lastkey
		case s.limit == 0:
			last = argc + s.lastkey
		default:
			last = first + ((argc-first)/s.limit + s.lastkey)
		}
	case "keynum":
		if first+s.keynumidx >= argc {
			return 0, 0, 0, false
		}
		n, err := strconv.ParseInt(argv[first+s.keynumidx], 10, 64)
		if err != nil || n < 0 || n > int64(argc) {
			return 0, 0, 0, false
		}
		first += s.firstkey
		last = first + int(n) - 1
		step = s.kstep
	default:
		return 0, 0, 0, false
	}
	if last >= argc || last < first || first >= argc {
		return 0, 0, 0, false
	}
	return first, last, step, true
}

// commandGetKeys answers COMMAND GETKEYS and GETKEYSANDFLAGS.
func (h *host) commandGetKeys(c *server.Peer, cs *commandSet, withFlags bool, argv []string) {
	cmd := cs.lookup(argv)
	switch {
	case cmd == nil:
		c.WriteError("ERR Invalid command specified")
		return
	case !cmd.hasKeys():
		c.WriteError("ERR The command has no key arguments")
		return
	case cmd.arity > 0 && cmd.arity != len(argv) || len(argv) < -cmd.arity:
		c.WriteError("ERR Invalid number of arguments specified for command")
		return
	}
	keys := cmd.keys(argv)
	if len(keys) == 0 {
		if cmd.flags["no_mandatory_keys"] {
			c.WriteLen(0)
		} else {
			c.WriteError("ERR Invalid arguments specified for command")
		}
		return
	}
	c.Block(func(w *server.Writer) {
		w.WriteLen(len(keys))
		for _, k := range keys {
			if !withFlags {
				w.WriteBulk(argv[k.pos])
				continue
			}
			w.WriteLen(2)
			w.WriteBulk(argv[k.pos])
			k.flags.write(w)
		}
	})
}
