package console

import (
	"slices"
	"strings"
)

// Class is what a command does, as the server's command table says.
type Class int

const (
	// Read changes nothing: flagged readonly and not a write, or one of
	// the few core commands with no flag that only read (PING, TIME).
	Read Class = iota
	// Write changes keys (flag write, or @write): an audited action.
	Write
	// ServerWrite changes something other than keys without being
	// @dangerous (PUBLISH): nothing to preview, record or undo.
	ServerWrite
	// Dangerous is @dangerous, or flagged admin or noscript (FLUSHALL,
	// CONFIG SET, DEBUG, SCRIPT FLUSH, INFO, CLIENT LIST), or flagged
	// nothing at all (Unflagged: MEMORY PURGE, a module's command).
	Dangerous
	// Blocking waits for data or holds the connection (BLPOP, XREAD
	// BLOCK, WAIT, SUBSCRIBE, MONITOR): not for a request/response page.
	Blocking
	// ConnState changes the connection itself (SELECT, AUTH, MULTI):
	// the console's connections are shared and stay as Keydeck set them.
	ConnState
)

func (c Class) String() string {
	return [...]string{"read-only", "write", "server write", "dangerous", "blocking", "connection state"}[c]
}

// connState are the commands that change the connection they run on
// rather than data: protocol mechanics no flag marks as such (SELECT is
// just "fast"), so they are named. A shared pooled connection left in
// another database, a transaction or RESP version would break Keydeck's
// own reads.
var connState = []string{
	"select", "auth", "hello", "reset", "quit", "multi", "exec", "discard", "watch", "unwatch",
	"readonly", "readwrite", "asking",
	"client|setname", "client|setinfo", "client|reply", "client|tracking", "client|caching",
	"client|no-evict", "client|no-touch",
}

// Classify says what c does with args (the full line, args[0] its name).
func Classify(c *Command, args []string) Class {
	if slices.Contains(connState, c.Name) {
		return ConnState
	}
	if isBlocking(c, args) {
		return Blocking
	}
	if c.In("@dangerous") || c.Has("admin") || c.Has("noscript") {
		return Dangerous
	}
	switch {
	case c.Has("readonly") && !c.Has("write") && !c.In("@write"):
		return Read
	case c.Has("write") || c.In("@write") || c.Has("may_replicate"):
		return Write
	case c.Name == "publish" || c.Name == "spublish":
		// Flagged only pubsub and fast, yet each message reaches every
		// subscriber: a write that no key records.
		return ServerWrite
	case coreRead(c):
		return Read
	}
	// Reads are allowed, not presumed: a command the table flags neither
	// readonly nor write (MEMORY PURGE, a module's command) may change
	// anything, so it is treated as dangerous (Unflagged says why).
	return Dangerous
}

// coreReads are the commands that only read yet carry no readonly flag
// (the table gives PING, TIME and COMMAND none): named, since nothing in
// the table tells them from MEMORY PURGE. Any subcommand HELP is one too.
var coreReads = []string{
	"ping", "echo", "time",
	"command", "command|count", "command|docs", "command|getkeys", "command|getkeysandflags", "command|info", "command|list",
	"cluster|info", "cluster|keyslot", "cluster|myid", "cluster|nodes", "cluster|slots", "cluster|shards", "cluster|links",
	"cluster|countkeysinslot",
}

func coreRead(c *Command) bool {
	return !c.Module && (slices.Contains(coreReads, c.Name) || strings.HasSuffix(c.Name, "|help"))
}

// Unflagged: the table says nothing of what c does — no readonly, write,
// admin or noscript flag, no @read, @write or @dangerous — and it is not a
// core read: refused to viewers and support, dangerous for admins.
func Unflagged(c *Command) bool {
	for _, f := range []string{"readonly", "write", "may_replicate", "admin", "noscript"} {
		if c.Has(f) {
			return false
		}
	}
	return !c.In("@read") && !c.In("@write") && !c.In("@dangerous") && !coreRead(c) && c.Name != "publish" && c.Name != "spublish"
}

// isBlocking: the table's blocking flag or @blocking, except XREAD and
// XREADGROUP, which carry it for their optional BLOCK argument and
// return at once without it; the subscribe family and MONITOR turn the
// connection into a stream of pushes.
func isBlocking(c *Command, args []string) bool {
	switch c.Name {
	case "monitor", "subscribe", "psubscribe", "ssubscribe", "unsubscribe", "punsubscribe", "sunsubscribe":
		return true
	case "xread", "xreadgroup":
		return slices.ContainsFunc(args[1:], func(a string) bool { return strings.EqualFold(a, "block") })
	}
	return c.Has("blocking") || c.In("@blocking")
}

// grows: the command's cost grows with the data it reads (not @fast),
// so its keys' sizes are measured before it runs.
func grows(c *Command) bool { return !c.In("@fast") && !c.Has("fast") }

// isScan: the cursor family, bounded by its COUNT instead.
func isScan(c *Command) bool {
	return slices.Contains([]string{"scan", "hscan", "sscan", "zscan"}, c.Name)
}
