package console

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/redisview/action"
	"github.com/keydeck/keydeck/redisview/schema"
)

// The console's write action: one command line whose keys GETKEYS names.
const (
	KindCommand = "console-command"
	ArgCommand  = "command"
)

// commandKind runs a write command typed in the console as an action:
// the Runner WATCHes the keys COMMAND GETKEYS names, records their prior
// state (DUMP, bounded), runs the command in MULTI, and undo restores
// them. The line travels quoted (Quote), so its arguments are bytes.
type commandKind struct{}

func init() { action.Register(commandKind{}) }

func (commandKind) Name() string           { return KindCommand }
func (commandKind) Title() string          { return "Run a console command" }
func (commandKind) Requires() action.Level { return action.Admin }
func (commandKind) Args() []action.Arg {
	// Data: the line holds values (SET's), withheld from the audit record
	// when a key it touches is sensitive.
	return []action.Arg{{Name: ArgCommand, Help: "a write command on keys, quoted as redis-cli reads it", Data: true}}
}

// AppliesTo keeps the kind off the key page's forms: it is started from
// the console, which names the whole line.
func (commandKind) AppliesTo(*schema.Family) bool { return false }

func (commandKind) Plan(ctx context.Context, env action.Env, req action.Request) (action.Plan, error) {
	for name := range req.Args {
		if name != ArgCommand {
			return nil, fmt.Errorf("%w: unknown argument %q", action.ErrInvalid, name)
		}
	}
	if req.Key != "" {
		return nil, fmt.Errorf("%w: a console command names its keys in its line, not in key", action.ErrInvalid)
	}
	args, err := Split(req.Args[ArgCommand])
	if err != nil {
		return nil, fmt.Errorf("%w: %v", action.ErrInvalid, err)
	}
	cl := env.Conn.DB(req.DB)
	// The table of one server (on a cluster its first primary, cached
	// under that node: At): a cluster's client would ask any node.
	on, err := At(ctx, env.Conn, "", req.DB)
	if err != nil {
		return nil, planErr(err)
	}
	t, err := on.Table(ctx)
	if err != nil {
		return nil, planErr(err)
	}
	// The Runner checks the role, read-only and Keydeck's own keys itself.
	d, err := Decide(ctx, cl, t, Request{Args: args, DB: req.DB, Level: action.Admin, Sensitive: env.Conn.Sensitive})
	if err != nil {
		return nil, planErr(err)
	}
	if d.Class != Write {
		return nil, fmt.Errorf("%w: %s is %s, not a write on keys", action.ErrInvalid, strings.ToUpper(d.Cmd.Name), d.Class)
	}
	return commandPlan{args: args, keys: d.Keys}, nil
}

func planErr(err error) error {
	var re redis.Error
	switch {
	case errors.Is(err, action.ErrForbidden), errors.Is(err, action.ErrInvalid):
		return err
	case errors.Is(err, ErrNoCommandTable), errors.Is(err, ErrClusterDB), errors.As(err, &re):
		return fmt.Errorf("%w: %v", action.ErrInvalid, err)
	}
	return fmt.Errorf("%w: %v", action.ErrRedis, err)
}

type commandPlan struct {
	args, keys []string
}

func (p commandPlan) Keys() []string { return p.keys }

// Line is the command as the console shows it and Split reads it back:
// plain arguments as they are, the others quoted (Quote).
func Line(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = a
		if a == "" || strings.ContainsFunc(a, func(r rune) bool { return !plain(r) }) {
			q[i] = Quote(a)
		}
	}
	return strings.Join(q, " ")
}

func plain(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_-.:|*@{}[]/+=,", r)
}

func (p commandPlan) Describe(states []action.State) ([]action.Change, error) {
	line := Line(p.args)
	if slices.ContainsFunc(states, func(s action.State) bool { return s.Sensitive }) {
		line = strings.ToUpper(p.args[0]) + " (arguments withheld: a key of a sensitive family)"
	}
	out := make([]action.Change, len(states))
	for i, s := range states {
		text := fmt.Sprintf("%s before: %s", Quote(s.Key), s.Shape())
		if i == 0 {
			text = "RUN " + line + " — " + text
		}
		out[i] = action.Change{Key: s.Key, Op: "command", After: "as the command leaves it", Before: s, Text: text}
	}
	return out, nil
}

func (p commandPlan) Apply(ctx context.Context, tx redis.Pipeliner, _ []action.State) {
	tx.Do(ctx, toAny(p.args)...)
}
