package console

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Command is one entry of a server's own command table (COMMAND INFO):
// what the console classifies by, so that a command a newer Redis adds is
// judged by what that Redis says of it, not by a list Keydeck ships.
type Command struct {
	Name  string // lower case; a subcommand is "config|get"
	Arity int    // negative: at least -Arity arguments, the name included
	Flags []string
	// First, Last and Step are the legacy key positions (Redis < 7 has
	// nothing else): keys at First, First+Step, … up to Last (negative:
	// from the end).
	First, Last, Step int
	ACL               []string // "@read", "@write", "@dangerous", …
	KeySpecs          []KeySpec
	Subcommands       map[string]*Command // by full name ("config|get")
	Summary           string              // from COMMAND DOCS, when read
	// Module: a module's command (markModules), which may read keys its
	// key specs do not name.
	Module bool
}

// KeySpec is the part of a Redis 7 key specification the console uses.
type KeySpec struct {
	Flags []string // RO, RW, OW, RM, access, update, insert, delete, …
	// Search is begin_search's type: "index", "keyword" or "unknown"
	// (key names the server cannot point at, such as SORT's BY patterns).
	Search string
	Index  int // begin_search index, for Search "index"
	// Range: find_keys range (lastkey, keystep); Find "range" or "keynum".
	Find              string
	LastKey, KeyStep  int
	KeyNumIdx, FirstK int
}

// Has reports a command flag ("readonly", "write", "admin", …).
func (c *Command) Has(flag string) bool { return slices.Contains(c.Flags, flag) }

// In reports an ACL category ("@write").
func (c *Command) In(cat string) bool { return slices.Contains(c.ACL, cat) }

// readsUnnamedKeys: a key spec the server cannot locate that reads data
// (SORT's BY and GET patterns): GETKEYS cannot name those keys, so the
// console cannot check them against the sensitive families.
func (c *Command) readsUnnamedKeys() bool {
	for _, ks := range c.KeySpecs {
		if ks.Search == "unknown" && (slices.Contains(ks.Flags, "RO") || slices.Contains(ks.Flags, "access")) {
			return true
		}
	}
	return false
}

// Table is a server's command table by lower-case name.
type Table struct {
	RunID    string
	Commands map[string]*Command
}

// Lookup finds the entry args name: the subcommand's ("config|get") where
// the command has subcommands and one is given, else the command's. nil:
// the server does not know the command.
func (t *Table) Lookup(args []string) *Command {
	if len(args) == 0 {
		return nil
	}
	c := t.Commands[strings.ToLower(args[0])]
	if c == nil || len(c.Subcommands) == 0 || len(args) < 2 {
		return c
	}
	if sub := c.Subcommands[c.Name+"|"+strings.ToLower(args[1])]; sub != nil {
		return sub
	}
	return c
}

// parseTable reads the raw reply of COMMAND (or COMMAND INFO): one array
// per command, RESP2 or RESP3.
func parseTable(reply any) (map[string]*Command, error) {
	list, ok := reply.([]any)
	if !ok {
		return nil, fmt.Errorf("COMMAND answered %T, not an array", reply)
	}
	out := make(map[string]*Command, len(list))
	for _, e := range list {
		if e == nil { // COMMAND INFO of an unknown name
			continue
		}
		c, err := parseCommand(e)
		if err != nil {
			return nil, err
		}
		out[c.Name] = c
	}
	markModules(out)
	return out, nil
}

func parseCommand(e any) (*Command, error) {
	f, ok := e.([]any)
	if !ok || len(f) < 6 {
		return nil, fmt.Errorf("a COMMAND entry is %T of %d fields, not an array of at least 6", e, len(f))
	}
	c := &Command{Name: strings.ToLower(str(f[0])), Arity: num(f[1]), Flags: strs(f[2]),
		First: num(f[3]), Last: num(f[4]), Step: num(f[5])}
	if c.Name == "" {
		return nil, fmt.Errorf("a COMMAND entry has no name")
	}
	if len(f) > 6 {
		c.ACL = strs(f[6])
	}
	if len(f) > 8 {
		for _, s := range list(f[8]) {
			c.KeySpecs = append(c.KeySpecs, parseKeySpec(s))
		}
	}
	if len(f) > 9 {
		for _, s := range list(f[9]) {
			sub, err := parseCommand(s)
			if err != nil {
				return nil, err
			}
			if c.Subcommands == nil {
				c.Subcommands = map[string]*Command{}
			}
			c.Subcommands[sub.Name] = sub
		}
	}
	return c, nil
}

func parseKeySpec(v any) KeySpec {
	m := pairs(v)
	ks := KeySpec{Flags: strs(m["flags"])}
	bs := pairs(m["begin_search"])
	ks.Search = str(bs["type"])
	spec := pairs(bs["spec"])
	ks.Index = num(spec["index"])
	fk := pairs(m["find_keys"])
	ks.Find = str(fk["type"])
	spec = pairs(fk["spec"])
	ks.LastKey, ks.KeyStep = num(spec["lastkey"]), num(spec["keystep"])
	ks.KeyNumIdx, ks.FirstK = num(spec["keynumidx"]), num(spec["firstkey"])
	return ks
}

// The raw reply's pieces: go-redis gives bulk and status strings as
// string, integers as int64, arrays and RESP3 sets as []any, RESP3 maps as
// map[any]any (RESP2 sends a map as a flat array of pairs).

func str(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case int64:
		return strconv.FormatInt(x, 10)
	}
	return ""
}

func num(v any) int {
	switch x := v.(type) {
	case int64:
		return int(x)
	case string:
		n, _ := strconv.Atoi(x)
		return n
	}
	return 0
}

func list(v any) []any {
	l, _ := v.([]any)
	return l
}

func strs(v any) []string {
	var out []string
	for _, e := range list(v) {
		out = append(out, str(e))
	}
	return out
}

func pairs(v any) map[string]any {
	out := map[string]any{}
	switch x := v.(type) {
	case map[any]any:
		for k, e := range x {
			out[str(k)] = e
		}
	case []any:
		for i := 0; i+1 < len(x); i += 2 {
			out[str(x[i])] = x[i+1]
		}
	}
	return out
}
