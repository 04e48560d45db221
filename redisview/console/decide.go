package console

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/redisview/action"
)

// Bounds of what a read may cost.
const (
	// MaxElements: a command whose cost grows with the data runs only on
	// keys of at most this many elements (bytes for a string: MaxBytes).
	MaxElements = 1000
	MaxBytes    = 1 << 20
	// MaxScanCount caps a SCAN family COUNT.
	MaxScanCount = 1000
)

// Page is the bounded page of Keydeck that does a refused command's job.
type Page int

const (
	NoPage     Page = iota
	KeyPage         // the key's own page (Refused.Key)
	KeyBrowser      // the database's key browser (SCAN, paginated)
	ServerPage      // INFO, MEMORY, CONFIG GET, CONFIG SET as an action
	ClientsPage
	SlowlogPage
	LatencyPage
	PubSubPage
)

// Refused is a command the console will not run, and why; it wraps
// action.ErrForbidden (a role or safety rule) or action.ErrInvalid (not a
// command this console can run at all).
type Refused struct {
	Err  error
	Page Page   // where the job is done instead; NoPage: nowhere
	Key  string // for KeyPage
}

func (r *Refused) Error() string { return r.Err.Error() }
func (r *Refused) Unwrap() error { return r.Err }

func forbidden(p Page, key, format string, a ...any) error {
	return &Refused{Err: fmt.Errorf("%w: "+format, append([]any{action.ErrForbidden}, a...)...), Page: p, Key: key}
}

func invalid(p Page, format string, a ...any) error {
	return &Refused{Err: fmt.Errorf("%w: "+format, append([]any{action.ErrInvalid}, a...)...), Page: p}
}

// Request is one command line to judge.
type Request struct {
	Args           []string
	DB             int
	Level          action.Level
	ReadOnly       bool // Keydeck runs --read-only
	AllowDangerous bool // --console-allow-dangerous
	// Sensitive reports a key of a sensitive family (Conn.Sensitive);
	// Protected a key of Keydeck's own (Runner.Protected).
	Sensitive func(db int, key string) bool
	Protected func(key string) bool
}

// Decision is what the console does with a line: run it (a read) or send
// it to the action path (a write on keys, admin only).
type Decision struct {
	Cmd   *Command
	Class Class
	Keys  []string // the key arguments, as COMMAND GETKEYS names them
}

// Decide judges req against the table of the server cl talks to, reading
// the keys' sizes where the command's cost grows with them. A refusal is a
// *Refused; a server error answering the arguments (wrong arity) is a
// redis.Error, the server's own reply.
func Decide(ctx context.Context, cl redis.UniversalClient, t *Table, req Request) (Decision, error) {
	if len(req.Args) == 0 {
		return Decision{}, invalid(NoPage, "type a command")
	}
	name := strings.ToLower(req.Args[0])
	c := t.Lookup(req.Args)
	if c == nil {
		return Decision{}, invalid(NoPage, "this server has no command %s (its command table does not list it)", Quote(req.Args[0]))
	}
	if n := len(req.Args); (c.Arity > 0 && n != c.Arity) || (c.Arity < 0 && n < -c.Arity) {
		return Decision{}, replyError(fmt.Sprintf("ERR wrong number of arguments for '%s' command", c.Name))
	}
	d := Decision{Cmd: c, Class: Classify(c, req.Args)}
	if err := refuseByClass(name, c, d.Class, req); err != nil {
		return d, err
	}
	keys, err := Keys(ctx, cl, c, req.Args)
	if err != nil {
		return d, err
	}
	d.Keys = dedupe(keys)
	if c.Has("movablekeys") && len(d.Keys) == 0 {
		// Its keys move with its arguments, and GETKEYS found none: what
		// it reaches cannot be checked.
		return d, forbidden(NoPage, "", "%s names no keys in this line, though its keys follow its arguments: the console cannot tell what it would reach, so it does not run it", strings.ToUpper(c.Name))
	}
	for _, k := range d.Keys {
		if req.Protected != nil && req.Protected(k) {
			return d, forbidden(NoPage, "", "%s belongs to Keydeck itself (audit log, sessions, tokens): the console neither reads nor changes it", Quote(k))
		}
		if req.Sensitive != nil && req.Sensitive(req.DB, k) && d.Class == Read {
			return d, forbidden(NoPage, "", "%s is of a sensitive family: its value is never shown, so the console does not read it", Quote(k))
		}
	}
	if d.Class == Dangerous && len(d.Keys) > 0 {
		// Allowed by the flag, but its keys' prior state would not be
		// recorded as a key action records it (RESTORE, MIGRATE).
		return d, forbidden(NoPage, "", "%s is a dangerous command on keys; the console runs dangerous commands only on the server as a whole", strings.ToUpper(c.Name))
	}
	if d.Class == Write {
		switch {
		case req.Level < action.Admin:
			return d, forbidden(NoPage, "", "%s writes; the console's writes need the admin role (you are %s)", strings.ToUpper(c.Name), req.Level)
		case len(d.Keys) == 0:
			return d, forbidden(writePage(c), "", "%s changes the server without naming keys: nothing to preview, record or undo, so the console does not run it", strings.ToUpper(c.Name))
		case mixesSensitive(req, d.Keys):
			// COPY, SUNIONSTORE, LMOVE …: a sensitive value copied into a
			// key whose value the pages show.
			return d, forbidden(NoPage, "", "%s names keys of a sensitive family and other keys together: it could copy a sensitive value where it would be shown, so the console does not run it", strings.ToUpper(c.Name))
		}
		return d, nil
	}
	return d, checkCost(ctx, cl, c, d.Keys, req)
}

// refuseByClass applies the rules that need no key: connection state,
// blocking, dangerous commands and writes nobody can preview.
func refuseByClass(name string, c *Command, cl Class, req Request) error {
	if err := neverRuns(c, req.Args); err != nil {
		return err
	}
	up := strings.ToUpper(strings.ReplaceAll(c.Name, "|", " "))
	switch {
	case name == "keys":
		return forbidden(KeyBrowser, "", "KEYS walks every key of the database in one blocking call; the key browser and search walk it with SCAN, a page at a time")
	case cl == ConnState && name == "select":
		return invalid(NoPage, "the console's database is chosen with the database selector, not SELECT")
	case cl == ConnState:
		return invalid(NoPage, "%s changes the connection itself, which the console shares with the rest of Keydeck: it is not run", up)
	case cl == Blocking && strings.HasSuffix(name, "subscribe"):
		return invalid(PubSubPage, "%s waits for messages; the Pub/Sub page watches channels and patterns live", up)
	case cl == Blocking:
		return invalid(NoPage, "%s blocks the connection or waits for data: not for a request/response console", up)
	case cl == ServerWrite:
		return forbidden(PubSubPage, "", "%s reaches every subscriber and no key records it: nothing to preview, record or undo, so the console does not run it", up)
	case c.readsUnnamedKeys():
		return forbidden(NoPage, "", "%s reads keys named by patterns in the data (BY/GET), which the console cannot check against the sensitive families", up)
	case cl == Dangerous && isRead(c):
		return forbidden(readPage(c.Name), "", "%s reads the server's state, which the page linked shows bounded and with sensitive settings withheld; the console does not run it", up)
	case cl == Dangerous && req.ReadOnly:
		return forbidden(NoPage, "", "Keydeck runs read-only; every write is disabled")
	case cl == Dangerous && Unflagged(c) && (req.Level < action.Admin || !req.AllowDangerous):
		return forbidden(NoPage, "", "%s carries no readonly or write flag in the server's command table, so the console cannot tell what it does: it runs only as a dangerous command, for admins, when Keydeck was started with --console-allow-dangerous", up)
	case cl == Dangerous && (req.Level < action.Admin || !req.AllowDangerous):
		return forbidden(writePage(c), "", "%s is a dangerous command (the server's @dangerous category or admin flag); the console refuses it unless Keydeck was started with --console-allow-dangerous, and then only to admins", up)
	case cl == Dangerous && writePage(c) != NoPage:
		return forbidden(writePage(c), "", "%s has its own audited form on the page linked (previewed, recorded, undone where it can be)", up)
	case cl == Dangerous && CarriesSecret(req.Args):
		return forbidden(NoPage, "", "%s carries a password or another secret, which the audit log would record: the console does not run it", up)
	case cl == Write && req.ReadOnly:
		return forbidden(NoPage, "", "Keydeck runs read-only; every write is disabled")
	}
	return nil
}

func mixesSensitive(req Request, keys []string) bool {
	if req.Sensitive == nil {
		return false
	}
	n := 0
	for _, k := range keys {
		if req.Sensitive(req.DB, k) {
			n++
		}
	}
	return n > 0 && n < len(keys)
}

// pageReads are the server commands that change nothing and whose job a
// page does: named, since the table flags CLIENT LIST as it flags CLIENT
// PAUSE (admin, @dangerous) and MEMORY STATS as MEMORY PURGE (nothing).
var pageReads = []string{
	"info", "lastsave", "role", "dbsize", "config|get",
	"memory|stats", "memory|doctor", "memory|malloc-stats",
	"client|list", "client|info", "client|getname", "client|id", "client|trackinginfo", "client|getredir",
	"slowlog|get", "slowlog|len",
	"latency|latest", "latency|history", "latency|graph", "latency|doctor", "latency|histogram",
	"pubsub|channels", "pubsub|numsub", "pubsub|numpat", "pubsub|shardchannels", "pubsub|shardnumsub",
}

// isRead: a dangerous (or unflagged) command that changes nothing (INFO,
// CLIENT LIST, SLOWLOG GET): still refused, with the page that shows it.
func isRead(c *Command) bool {
	return !c.Module && slices.Contains(pageReads, c.Name) && readPage(c.Name) != NoPage
}

// readPage is the page that shows what a server command reads.
func readPage(name string) Page {
	root, _, _ := strings.Cut(name, "|")
	switch root {
	case "info", "memory", "config", "lastsave", "role", "dbsize":
		return ServerPage
	case "client":
		return ClientsPage
	case "slowlog":
		return SlowlogPage
	case "latency":
		return LatencyPage
	case "pubsub":
		return PubSubPage
	}
	return NoPage
}

// writePage is the page with an audited form for a server change.
func writePage(c *Command) Page {
	switch c.Name {
	case "config|set":
		return ServerPage
	case "client|kill":
		return ClientsPage
	}
	return NoPage
}

// checkCost refuses a read whose cost grows with keys larger than the
// bounds, and a SCAN family COUNT above MaxScanCount.
func checkCost(ctx context.Context, cl redis.UniversalClient, c *Command, keys []string, req Request) error {
	if err := checkCounts(c, req.Args); err != nil {
		return err
	}
	if isScan(c) {
		for i := 1; i+1 < len(req.Args); i++ {
			if strings.EqualFold(req.Args[i], "count") {
				if n, err := strconv.Atoi(req.Args[i+1]); err == nil && n > MaxScanCount {
					return forbidden(KeyBrowser, "", "COUNT %d is above the console's %d per call", n, MaxScanCount)
				}
			}
		}
		return nil
	}
	if !grows(c) || len(keys) == 0 {
		return nil
	}
	sizes, err := measure(ctx, cl, keys)
	if err != nil {
		return err
	}
	for i, s := range sizes {
		if s.n > s.bound {
			return forbidden(KeyPage, keys[i], "%s costs time in proportion to its keys' size, and %s holds %d %s (the console's bound is %d): its key page reads it a page at a time",
				strings.ToUpper(c.Name), Quote(keys[i]), s.n, s.unit, s.bound)
		}
	}
	return nil
}

type size struct {
	n, bound int64
	unit     string
}

// measure reads each key's type, then its size with the type's O(1) size
// command, in two pipelines.
func measure(ctx context.Context, cl redis.UniversalClient, keys []string) ([]size, error) {
	types := make([]*redis.StatusCmd, len(keys))
	if _, err := cl.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, k := range keys {
			types[i] = p.Type(ctx, k)
		}
		return nil
	}); err != nil {
		return nil, err
	}
	out := make([]size, len(keys))
	lens := make([]*redis.Cmd, len(keys))
	if _, err := cl.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, k := range keys {
			cmd, unit := sizeCommand(types[i].Val())
			out[i] = size{bound: MaxElements, unit: unit}
			if unit == "bytes" {
				out[i].bound = MaxBytes
			}
			if cmd != "" {
				lens[i] = p.Do(ctx, cmd, k)
			}
		}
		return nil
	}); err != nil && !errors.Is(err, redis.Nil) {
		return nil, err
	}
	for i, l := range lens {
		if l != nil {
			out[i].n, _ = l.Int64()
		}
	}
	return out, nil
}

func sizeCommand(typ string) (string, string) {
	switch typ {
	case "string":
		return "STRLEN", "bytes"
	case "hash":
		return "HLEN", "fields"
	case "set":
		return "SCARD", "members"
	case "zset":
		return "ZCARD", "members"
	case "list":
		return "LLEN", "elements"
	case "stream":
		return "XLEN", "entries"
	}
	return "", "elements" // absent, or a module type: nothing to measure
}

func dedupe(keys []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, k := range keys {
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out
}

// replyError is an error reply the console words as the server would.
type replyError string

func (e replyError) Error() string { return string(e) }
func (replyError) RedisError()     {}
