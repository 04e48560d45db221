package demo

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/alicebob/miniredis/v2/server"
)

// hostCommands are the commands the host answers itself, beside those
// miniredis registers.
var hostCommands = map[string]bool{
	"info": true, "config": true, "slowlog": true, "latency": true, "client": true,
	"command": true, "memory": true, "object": true, "cluster": true,
}

// demoSubcommands are the subcommands the demo serves of each container
// command it has; Redis's others are left out of its table, so a console
// refuses them as a server that lacks them. (CLUSTER keeps all of Redis's:
// a server without cluster support has them all and refuses each, as the
// demo does.)
var demoSubcommands = map[string][]string{
	"client":  {"getname", "setname", "id", "info", "list", "kill"},
	"command": {"count", "list", "info", "docs", "getkeys", "getkeysandflags"},
	"config":  {"get", "set", "resetstat"},
	"latency": {"latest", "history", "reset", "doctor"},
	"memory":  {"usage", "stats", "doctor"},
	"object":  {"encoding", "idletime"},
	"pubsub":  {"channels", "numsub", "numpat"},
	"script":  {"load", "exists", "flush"},
	"slowlog": {"get", "len", "reset"},
	"xgroup":  {"create", "destroy", "createconsumer", "delconsumer"},
	"xinfo":   {"stream", "groups", "consumers"},
}

// commandSet is Redis's command table restricted to what the demo serves.
type commandSet struct {
	byName map[string]*command
	names  []string // sorted
}

// buildCommands keeps the commands of the table that miniredis registers or
// the host answers, each with the subcommands the demo serves.
func buildCommands(registered func(string) bool) *commandSet {
	tab := loadRedisTable()
	cs := &commandSet{byName: map[string]*command{}}
	for name, e := range tab.Info {
		if !registered(name) && !hostCommands[name] {
			continue
		}
		c := parseCommand(e)
		if keep, ok := demoSubcommands[name]; ok {
			c.keepSubcommands(keep)
		}
		cs.byName[name] = c
		cs.names = append(cs.names, name)
	}
	sort.Strings(cs.names)
	return cs
}

// keepSubcommands drops the subcommands not in keep, from the command and
// from its COMMAND INFO entry.
func (c *command) keepSubcommands(keep []string) {
	entry := c.entry
	entry.A = append([]reply(nil), entry.A...)
	var subs []reply
	for _, se := range c.entry.A[9].A {
		_, sub, _ := strings.Cut(se.A[0].S, "|")
		if slices.Contains(keep, sub) {
			subs = append(subs, se)
		} else {
			delete(c.subs, sub)
		}
	}
	entry.A[9] = reply{K: c.entry.A[9].K, A: subs}
	c.entry = entry
}

// lookup finds a command by its arguments as sent ("CONFIG", "GET" …), as
// Redis does: a container's subcommand when it has subcommands.
func (cs *commandSet) lookup(args []string) *command {
	if len(args) == 0 {
		return nil
	}
	c := cs.byName[strings.ToLower(args[0])]
	if c == nil || c.subs == nil || len(args) < 2 {
		return c
	}
	return c.subs[strings.ToLower(args[1])]
}

// fullName is the name Redis gives the command args run ("get",
// "client|list"), as CLIENT LIST's cmd and INFO commandstats show it; ""
// for a command the demo does not have.
func (cs *commandSet) fullName(cmd string, args []string) string {
	c := cs.lookup(append([]string{cmd}, args...))
	if c == nil {
		return ""
	}
	return c.name
}

// byFullName finds "get" or "config|get".
func (cs *commandSet) byFullName(name string) *command {
	name = strings.ToLower(name)
	top, sub, ok := strings.Cut(name, "|")
	c := cs.byName[top]
	if !ok || c == nil {
		return c
	}
	return c.subs[sub]
}

// docs is COMMAND DOCS's value of c, with the subcommands the demo serves.
func (c *command) docs() (reply, bool) {
	d, ok := loadRedisTable().Docs[c.name]
	if !ok || c.subs == nil {
		return d, ok
	}
	out := reply{K: d.K}
	for i := 0; i+1 < len(d.A); i += 2 {
		v := d.A[i+1]
		if d.A[i].S == "subcommands" {
			kept := reply{K: v.K}
			for j := 0; j+1 < len(v.A); j += 2 {
				_, sub, _ := strings.Cut(v.A[j].S, "|")
				if c.subs[sub] != nil {
					kept.A = append(kept.A, v.A[j], v.A[j+1])
				}
			}
			v = kept
		}
		out.A = append(out.A, d.A[i], v)
	}
	return out, true
}

// checkCall does what Redis does before it runs a command: an unknown
// subcommand and a wrong number of arguments are refused with its errors.
// It reports whether the command may run.
func (cs *commandSet) checkCall(c *server.Peer, cmd string, args []string) bool {
	top := cs.byName[strings.ToLower(cmd)]
	if top == nil {
		return true
	}
	full := append([]string{cmd}, args...)
	target := top
	if top.subs != nil && len(args) > 0 {
		target = top.subs[strings.ToLower(args[0])]
		if target == nil {
			c.WriteError(fmt.Sprintf("ERR unknown subcommand '%s'. Try %s HELP.", args[0], strings.ToUpper(cmd)))
			return false
		}
	}
	if n := len(full); target.arity > 0 && n != target.arity || target.arity < 0 && n < -target.arity {
		c.WriteError(fmt.Sprintf("ERR wrong number of arguments for '%s' command", target.name))
		return false
	}
	return true
}

// commandCmd answers COMMAND and its subcommands from the demo's table.
func (h *host) commandCmd(c *server.Peer, args []string) {
	cs := h.table
	if len(args) == 0 {
		c.Block(func(w *server.Writer) {
			w.WriteLen(len(cs.names))
			for _, n := range cs.names {
				cs.byName[n].entry.write(w)
			}
		})
		return
	}
	switch strings.ToLower(args[0]) {
	case "count":
		c.WriteInt(len(cs.names))
	case "list":
		h.commandList(c, cs, args[1:])
	case "info":
		h.commandInfo(c, cs, args[1:])
	case "docs":
		h.commandDocs(c, cs, args[1:])
	case "getkeys", "getkeysandflags":
		h.commandGetKeys(c, cs, strings.EqualFold(args[0], "getkeysandflags"), args[1:])
	}
}

func (h *host) commandInfo(c *server.Peer, cs *commandSet, names []string) {
	var list []*command
	if len(names) == 0 {
		for _, n := range cs.names {
			list = append(list, cs.byName[n])
		}
	} else {
		for _, n := range names {
			list = append(list, cs.byFullName(n))
		}
	}
	c.Block(func(w *server.Writer) {
		w.WriteLen(len(list))
		for _, cmd := range list {
			if cmd == nil {
				w.WriteNull()
				continue
			}
			cmd.entry.write(w)
		}
	})
}

func (h *host) commandDocs(c *server.Peer, cs *commandSet, names []string) {
	if len(names) == 0 {
		names = cs.names
	}
	var out []reply
	for _, n := range names {
		cmd := cs.byFullName(n)
		if cmd == nil {
			continue
		}
		if d, ok := cmd.docs(); ok {
			out = append(out, reply{K: "$", S: cmd.name}, d)
		}
	}
	c.Block(func(w *server.Writer) { reply{K: "%", A: out}.write(w) })
}

// commandList answers COMMAND LIST [FILTERBY MODULE m | ACLCAT c | PATTERN p]:
// every name, subcommands ("config|get") included, as Redis lists them.
func (h *host) commandList(c *server.Peer, cs *commandSet, args []string) {
	match := func(*command) bool { return true }
	switch {
	case len(args) == 0:
	case len(args) == 3 && strings.EqualFold(args[0], "FILTERBY"):
		v := args[2]
		switch strings.ToLower(args[1]) {
		case "module":
			match = func(*command) bool { return false } // the demo has no modules
		case "aclcat":
			match = func(cmd *command) bool {
				for _, cat := range cmd.entry.A[6].A {
					if strings.EqualFold(cat.S, "@"+v) {
						return true
					}
				}
				return false
			}
		case "pattern":
			match = func(cmd *command) bool { return globMatch(v, cmd.name, true) }
		default:
			c.WriteError("ERR syntax error")
			return
		}
	default:
		c.WriteError("ERR syntax error")
		return
	}
	var out []string
	for _, n := range cs.names {
		cmd := cs.byName[n]
		if match(cmd) {
			out = append(out, cmd.name)
		}
		for _, se := range cmd.entry.A[9].A {
			if sc := cmd.subs[strings.SplitN(se.A[0].S, "|", 2)[1]]; sc != nil && match(sc) {
				out = append(out, sc.name)
			}
		}
	}
	c.WriteStrings(out)
}
