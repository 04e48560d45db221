package server

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/redisview"
)

// Bounds of the slowlog page: entries read, and how much of each entry's
// arguments is kept.
const (
	SlowlogMax  = 128
	ArgMaxBytes = 200
	ArgMaxCount = 32
)

// Arg is one argument as kept: its first ArgMaxBytes bytes, exactly.
type Arg struct {
	Text string
	More int // bytes left off (by Keydeck, or by the server: see Cut)
	// Cut: the server itself shortened it ("... (N more bytes)"), so More
	// is the server's count.
	Cut bool
}

// SlowEntry is one SLOWLOG entry.
type SlowEntry struct {
	ID       int64
	Time     time.Time
	Duration time.Duration
	Command  string // the command's name as sent (bytes)
	Args     []Arg  // nil when withheld
	MoreArgs int    // arguments left off (by Keydeck or the server)
	// Withheld says why the arguments are not shown ("" when they are).
	Withheld   string
	ClientAddr string
	ClientName string
	Own        bool // sent by one of Keydeck's own clients
}

// Slowlog is one server's slowlog page.
type Slowlog struct {
	Entries []SlowEntry
	Len     redisview.Opt[int64] // SLOWLOG LEN: how many the server keeps
	// Threshold is slowlog-log-slower-than in microseconds (negative:
	// logging off; 0: every command); MaxLen is slowlog-max-len.
	Threshold redisview.Opt[int64]
	MaxLen    redisview.Opt[int64]
	Err       string // the slowlog itself could not be read
	Down      bool   // the server did not answer at all
}

// Namer tells which names are keys of a sensitive family (a
// redisview.Conn).
type Namer interface {
	SensitiveAnywhere(name string) (fam string, sensitive bool)
	SensitivePrefix(prefix string) (fam string, sensitive bool)
}

// OwnKeyPrefix begins the names of Keydeck's own keys (its signing
// secret, sign-in counters, audit log).
const OwnKeyPrefix = "keydeck:"

// ReadSlowlog reads the newest SlowlogMax entries, the log's length and
// its settings, in one round trip. own names Keydeck's own keys, whose
// commands carry its secrets (nil: those under OwnKeyPrefix): their
// arguments are withheld like a sensitive family's.
func ReadSlowlog(ctx context.Context, srv redisview.Server, names Namer, own func(key string) bool) Slowlog {
	cl := srv.Client()
	if own == nil {
		own = func(k string) bool { return strings.HasPrefix(k, OwnKeyPrefix) }
	}
	var get *redis.SlowLogCmd
	var n *redis.IntCmd
	var thr, ml *redis.MapStringStringCmd
	cmds, err := cl.Pipelined(ctx, func(p redis.Pipeliner) error {
		get = p.SlowLogGet(ctx, SlowlogMax)
		n = p.SlowLogLen(ctx)
		thr = p.ConfigGet(ctx, "slowlog-log-slower-than")
		ml = p.ConfigGet(ctx, "slowlog-max-len")
		return nil
	})
	var out Slowlog
	if err := redisview.PipelineErr(cmds, err); err != nil && redisview.IsConnErr(err) {
		out.Err, out.Down = "the server did not answer: "+err.Error(), true
		return out
	}
	out.Threshold = configInt(thr, "slowlog-log-slower-than")
	out.MaxLen = configInt(ml, "slowlog-max-len")
	if err := n.Err(); err != nil {
		out.Len = redisview.None[int64](redisview.Refusal("SLOWLOG LEN", err))
	} else {
		out.Len = redisview.Some(n.Val())
	}
	if err := get.Err(); err != nil {
		out.Err = redisview.Refusal("SLOWLOG GET", err)
		return out
	}
	for _, e := range get.Val() {
		out.Entries = append(out.Entries, slowEntry(e, names, own))
	}
	return out
}

// configInt is one integer setting read by CONFIG GET, or why it is not
// known (a managed Redis refuses CONFIG).
func configInt(cmd *redis.MapStringStringCmd, name string) redisview.Opt[int64] {
	if err := cmd.Err(); err != nil {
		return redisview.None[int64]("unknown: " + redisview.Refusal("CONFIG GET "+name, err))
	}
	v, ok := cmd.Val()[name]
	if !ok {
		return redisview.None[int64]("unknown: the server has no setting " + name)
	}
	i, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return redisview.None[int64](fmt.Sprintf("unknown: %s is %q", name, v))
	}
	return redisview.Some(i)
}

func slowEntry(e redis.SlowLog, names Namer, own func(string) bool) SlowEntry {
	out := SlowEntry{ID: e.ID, Time: e.Time, Duration: e.Duration, ClientAddr: e.ClientAddr, ClientName: e.ClientName,
		Own: e.ClientName == OwnClientName}
	if len(e.Args) == 0 {
		return out
	}
	out.Command = e.Args[0]
	args := e.Args[1:]
	// The server keeps at most 32 arguments, the last saying how many it
	// left off.
	if k := len(args); k > 0 {
		if m := moreArgsRe.FindStringSubmatch(args[k-1]); m != nil {
			out.MoreArgs, _ = strconv.Atoi(m[1])
			args = args[:k-1]
		}
	}
	if why := withheld(out.Command, args, names, own); why != "" {
		out.Withheld = why
		out.MoreArgs += len(args)
		return out
	}
	if len(args) > ArgMaxCount {
		out.MoreArgs += len(args) - ArgMaxCount
		args = args[:ArgMaxCount]
	}
	for _, a := range args {
		out.Args = append(out.Args, keepArg(a))
	}
	return out
}

var (
	moreArgsRe  = regexp.MustCompile(`^\.\.\. \((\d+) more arguments\)$`)
	moreBytesRe = regexp.MustCompile(`\.\.\. \((\d+) more bytes\)$`)
)

// keepArg keeps an argument's first ArgMaxBytes bytes, reading the
// server's own cut ("... (N more bytes)").
func keepArg(a string) Arg {
	var out Arg
	if loc := moreBytesRe.FindStringSubmatchIndex(a); loc != nil {
		out.More, _ = strconv.Atoi(a[loc[2]:loc[3]])
		out.Cut = true
		a = a[:loc[0]]
	}
	if len(a) > ArgMaxBytes {
		out.More += len(a) - ArgMaxBytes
		a = a[:ArgMaxBytes]
	}
	out.Text = a
	return out
}

// withheld says why a command's arguments must not be shown, or "".
func withheld(cmd string, args []string, names Namer, own func(string) bool) string {
	switch c := strings.ToLower(cmd); {
	case c == "auth", c == "hello", c == "migrate":
		return "arguments withheld: " + strings.ToUpper(c) + " may carry a password"
	case c == "acl" && len(args) > 0 && strings.EqualFold(args[0], "setuser"):
		return "arguments withheld: ACL SETUSER may carry a password"
	case c == "config" && len(args) > 0 && strings.EqualFold(args[0], "set"):
		// The CONFIG page's own list: a setting it never shows (masteruser,
		// TLS key paths …) is not shown here either. Every argument is
		// checked, values too, so a cut or odd argument list cannot shift
		// a parameter into a value's place.
		for _, p := range args[1:] {
			if SensitiveConfig(p) {
				return "arguments withheld: CONFIG SET of a sensitive setting (a password, or where one is)"
			}
		}
	}
	for _, a := range args {
		if own(a) || strings.HasPrefix(a, OwnKeyPrefix) {
			return "arguments withheld: a key of Keydeck's own (its secrets, sign-ins or audit log)"
		}
	}
	if names == nil {
		return ""
	}
	for _, a := range args {
		fam, ok := names.SensitiveAnywhere(a)
		if loc := moreBytesRe.FindStringIndex(a); loc != nil {
			// Cut by the server: the whole name is unknown, its beginning
			// may still be a sensitive family's.
			fam, ok = names.SensitivePrefix(a[:loc[0]])
		}
		if ok {
			if fam == "" {
				return "arguments withheld: which keys are sensitive is not known yet (the connection's pack is not chosen)"
			}
			return "arguments withheld: a key of sensitive family " + fam
		}
	}
	return ""
}
