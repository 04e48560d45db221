package console

import (
	"slices"
	"strings"
)

// Commands the console runs for nobody, not even an admin with
// --console-allow-dangerous: each would read or change keys the console
// cannot name and check (the sensitive families, Keydeck's own audit log
// and session secret), or put another database's keys beyond the checks
// and the prior-state record.

// markModules flags the commands a module added: a name with a dot
// (FT.SEARCH, JSON.GET), or no ACL category in a table whose commands
// have them (Redis 6+ gives every core command at least @fast or @slow;
// a module's have none before 7.2).
func markModules(cmds map[string]*Command) {
	acl := false
	for _, c := range cmds {
		acl = acl || len(c.ACL) > 0
	}
	var mark func(c *Command)
	mark = func(c *Command) {
		c.Module = strings.Contains(c.Name, ".") || (acl && len(c.ACL) == 0)
		for _, s := range c.Subcommands {
			mark(s)
		}
	}
	for _, c := range cmds {
		mark(c)
	}
}

// scripting names the script and function commands where the table has no
// ACL categories to say so (Redis < 6); newer servers say @scripting.
var scripting = []string{"eval", "evalsha", "eval_ro", "evalsha_ro", "fcall", "fcall_ro", "function", "script"}

// harmlessScripting: the @scripting commands that run no code and read
// nothing of the data.
var harmlessScripting = []string{"script|exists", "script|help", "function|help"}

// replication turns the connection into a replication link or a feed of
// every command the server runs (with their arguments: values, passwords),
// or the server into another's replica: a full sync replaces every key,
// Keydeck's audit log and session secret included, with another server's.
var replication = []string{"sync", "psync", "replconf", "monitor", "replicaof", "slaveof"}

// quadratic are reads whose cost grows with the product of their keys'
// sizes, not with the reply: LCS of two 11 KB strings fills a table of
// 128 million cells in the server's one thread.
var quadratic = []string{"lcs", "stralgo"}

// debugKeyless are the DEBUG subcommands that name no key: DEBUG has no
// key specs, so any other (OBJECT, DIGEST-VALUE, POPULATE, a newer one)
// may read or write keys the checks never see. RELOAD and LOADAOF are
// not among them: they replace every key from disk, the audit log too.
var debugKeyless = []string{
	"help", "sleep", "digest", "jmap", "set-active-expire", "change-repl-id", "log",
	"segfault", "panic", "assert", "oom", "htstats", "structsize", "pause-cron", "dict-resizing",
	"replybuffer", "client-eviction", "quicklist-packed-threshold", "stringmatch-len",
}

// neverRuns refuses what the console runs for nobody.
func neverRuns(c *Command, args []string) error {
	up := strings.ToUpper(strings.ReplaceAll(c.Name, "|", " "))
	root, _, _ := strings.Cut(c.Name, "|")
	switch {
	case isScripting(c, root):
		return forbidden(NoPage, "", "%s is one of the server's scripting commands (@scripting): scripts and functions read and change keys they do not name (sensitive families, Keydeck's own audit log), so the console runs none of them, even with --console-allow-dangerous", up)
	case slices.Contains(quadratic, root):
		return forbidden(NoPage, "", "%s costs the server time and memory in proportion to the product of its strings' lengths (two 11 KB strings: 128 million cells in its one thread), so the console does not run it", up)
	case slices.Contains(replication, c.Name):
		return forbidden(NoPage, "", "%s turns the connection into a replication link or a feed of every command the server runs: the console never runs it", up)
	case c.Has("movablekeys") && c.Has("no_mandatory_keys"):
		return forbidden(NoPage, "", "%s may name no keys and still reach any key: the console never runs it", up)
	case c.Module && len(c.KeySpecs) == 0 && c.First == 0 && !c.Has("movablekeys"):
		return forbidden(NoPage, "", "%s is a module's command that names no keys, yet may read keys (documents, series) the console cannot check against the sensitive families: the console never runs it", up)
	case root == "debug" && (len(args) < 2 || !slices.Contains(debugKeyless, strings.ToLower(args[1]))):
		sub := ""
		if len(args) > 1 {
			sub = " " + Quote(args[1])
		}
		return forbidden(NoPage, "", "DEBUG%s may read or change keys that the server's command table does not name: the console runs only the DEBUG subcommands known to take no key", sub)
	}
	return crossesDatabases(c, args)
}

func isScripting(c *Command, root string) bool {
	if slices.Contains(harmlessScripting, c.Name) {
		return false
	}
	return c.In("@scripting") || (len(c.ACL) == 0 && slices.Contains(scripting, root))
}

// crossesDatabases refuses the writes whose effect reaches another
// database than the console's: its keys there would escape the sensitive
// check, the prior-state record and undo (which restores one database).
func crossesDatabases(c *Command, args []string) error {
	const instead = "; to do it with Keydeck's checks, read the key here and write it with the database selector on the other database (each write previewed, recorded and undoable there)"
	switch c.Name {
	case "move":
		return forbidden(NoPage, "", "MOVE takes a key into another database, beyond the console's record of prior state and its undo, so the console does not run it"+instead)
	case "swapdb":
		return forbidden(NoPage, "", "SWAPDB exchanges two whole databases (perhaps Keydeck's own audit database), so the console never runs it; it is a job for redis-cli during maintenance")
	case "copy":
		if slices.ContainsFunc(args[min(len(args), 3):], func(a string) bool { return strings.EqualFold(a, "db") }) {
			return forbidden(NoPage, "", "COPY … DB writes into another database, beyond the console's sensitive-family check and its record of prior state, so the console does not run it; COPY without DB copies within this database"+instead)
		}
	}
	return nil
}
