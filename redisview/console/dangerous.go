package console

import (
	"context"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/action"
	"github.com/keydeck/keydeck/views/format"
)

// The console's dangerous action: a keyless @dangerous command (FLUSHDB,
// FLUSHALL, SCRIPT FLUSH, DEBUG …) run on one server, offered only when
// Keydeck runs with --console-allow-dangerous (the composition root gives
// DangerousKind to the Runner then; it is not registered otherwise).
const (
	KindDangerous = "console-dangerous"
	// ArgConfirm is the connection's name, typed by the person: checked at
	// the preview and again at the confirmation.
	ArgConfirm = "confirm"
)

// DangerousKind runs a dangerous command as a server action (action.OnServer):
// previewed with its scope in words, confirmed by typing the connection's
// name, recorded before and after; never undone.
type DangerousKind struct{}

func (DangerousKind) Name() string           { return KindDangerous }
func (DangerousKind) Title() string          { return "Run a dangerous command" }
func (DangerousKind) Requires() action.Level { return action.Admin }
func (DangerousKind) Args() []action.Arg {
	return []action.Arg{
		{Name: ArgCommand, Help: "a keyless dangerous command, quoted as redis-cli reads it"},
		{Name: action.ArgNode, Help: "a cluster node's address (host:port); empty for the connection's own server"},
		{Name: ArgConfirm, Help: "the connection's name, typed to confirm"},
	}
}

// NotUndoable is what the confirmation step says first.
func (DangerousKind) NotUndoable() string {
	return "A dangerous command cannot be undone: what it deletes or changes on the server is not recorded, so Keydeck cannot put it back."
}

func (DangerousKind) Plan(ctx context.Context, env action.Env, req action.Request) (action.Plan, error) {
	for name := range req.Args {
		if name != ArgCommand && name != action.ArgNode && name != ArgConfirm {
			return nil, fmt.Errorf("%w: unknown argument %q", action.ErrInvalid, name)
		}
	}
	if req.Args[ArgConfirm] != env.Conn.Name {
		return nil, fmt.Errorf("%w: type the connection's name, %s, to confirm a dangerous command", action.ErrInvalid, env.Conn.Name)
	}
	args, err := Split(req.Args[ArgCommand])
	if err != nil {
		return nil, fmt.Errorf("%w: %v", action.ErrInvalid, err)
	}
	on, err := At(ctx, env.Conn, req.Args[action.ArgNode], req.DB)
	if err != nil {
		return nil, planErr(err)
	}
	t, err := on.Table(ctx)
	if err != nil {
		return nil, planErr(err)
	}
	d, err := on.Decide(ctx, t, Request{Args: args, Level: action.Admin, AllowDangerous: true})
	if err != nil {
		return nil, planErr(err)
	}
	if d.Class != Dangerous {
		return nil, fmt.Errorf("%w: %s is %s, not a dangerous command", action.ErrInvalid, strings.ToUpper(d.Cmd.Name), d.Class)
	}
	if err := keepsAudit(ctx, env, on, args); err != nil {
		return nil, err
	}
	return action.OnServer(on.Node.Addr, dangerousPlan{name: d.Cmd.Name, args: args, on: on, display: display(env.Conn, on)}), nil
}

// keepsAudit refuses a FLUSHALL of the server that holds Keydeck's audit
// log, and a FLUSHDB of its database: the record of what was done, this
// command's own intent record included, would be erased with the rest. If
// it cannot be told whether they share a server, the command is refused.
func keepsAudit(ctx context.Context, env action.Env, on On, args []string) error {
	name := strings.ToLower(args[0])
	if (name != "flushall" && name != "flushdb") || env.Audit == nil {
		return nil
	}
	same, db, err := env.Audit.Beside(ctx, on.cl)
	switch {
	case err != nil:
		return fmt.Errorf("%w: %s refused: whether this server holds Keydeck's audit log could not be read (%v)", action.ErrRedis, strings.ToUpper(name), err)
	case same && name == "flushall":
		return fmt.Errorf("%w: FLUSHALL would erase Keydeck's audit log, which lives in database %d of this server; flush the other databases one by one (FLUSHDB) instead", action.ErrForbidden, db)
	case same && db == on.DB:
		return fmt.Errorf("%w: database %d of this server holds Keydeck's audit log; FLUSHDB would erase it", action.ErrForbidden, db)
	}
	return nil
}

func display(conn *redisview.Conn, on On) string {
	if on.Node.Addr != "" {
		return conn.Name + " (node " + on.Node.Addr + ")"
	}
	return conn.Name + " (" + conn.Display + ")"
}

type dangerousPlan struct {
	name    string // the table's name ("script|flush")
	args    []string
	on      On
	display string
}

// Read says the command's scope in words (Detail, shown only: the key
// counts move on a live server, and must not fail the confirmation);
// Value is the line itself.
func (p dangerousPlan) Read(ctx context.Context, _ redis.UniversalClient) (action.ServerState, error) {
	s := action.ServerState{Target: "command " + strings.ToUpper(p.args[0]), Value: Line(p.args)}
	name := strings.ToLower(p.args[0])
	switch name {
	case "flushdb":
		n, err := p.on.cl.DBSize(ctx).Result()
		if err != nil {
			return s, fmt.Errorf("%w: %v", action.ErrRedis, err)
		}
		s.Detail = fmt.Sprintf("FLUSHDB deletes all %s of database %d on %s", format.Plural(n, "key", "keys"), p.on.DB, p.display)
	case "flushall":
		n, dbs, err := keyspace(ctx, p.on.cl)
		if err != nil {
			return s, fmt.Errorf("%w: %v", action.ErrRedis, err)
		}
		s.Detail = fmt.Sprintf("FLUSHALL deletes all %s of every database (%s) on %s", format.Plural(n, "key", "keys"), dbs, p.display)
	default:
		s.Detail = fmt.Sprintf("%s acts on the whole server %s (the server's @dangerous category)", Line(p.args), p.display)
		if sum := summary(ctx, p.on.cl, p.name); sum != "" {
			s.Detail += "; the server's documentation says: " + sum
		}
	}
	return s, nil
}

// summary is COMMAND DOCS's summary of a command ("script|flush"), "" when
// the server has none (Redis < 7) or refuses.
func summary(ctx context.Context, cl redis.UniversalClient, name string) string {
	raw, err := cl.Do(ctx, "COMMAND", "DOCS", name).Result()
	if err != nil {
		return ""
	}
	return str(pairs(pairs(raw)[name])["summary"])
}

// keyspace sums INFO keyspace: every database's keys, and which.
func keyspace(ctx context.Context, cl redis.UniversalClient) (int64, string, error) {
	txt, err := cl.Info(ctx, "keyspace").Result()
	if err != nil {
		return 0, "", err
	}
	var total int64
	var dbs []string
	for _, line := range strings.Split(txt, "\n") {
		db, rest, ok := strings.Cut(strings.TrimSpace(line), ":keys=")
		if !ok || !strings.HasPrefix(db, "db") {
			continue
		}
		var n int64
		fmt.Sscanf(rest, "%d", &n)
		total += n
		dbs = append(dbs, fmt.Sprintf("%s: %s", db, format.Count(n)))
	}
	if len(dbs) == 0 {
		return 0, "none holds a key", nil
	}
	return total, strings.Join(dbs, ", "), nil
}

func (p dangerousPlan) Describe(s action.ServerState) (action.Change, error) {
	return action.Change{Op: "command", After: "as the command leaves it", Before: action.State{Type: "server"},
		Text: "RUN " + s.Value + ": " + s.Detail}, nil
}

// Apply runs the line on the database previewed (the server's client the
// Runner gives is its first database).
func (p dangerousPlan) Apply(ctx context.Context, _ redis.UniversalClient, s action.ServerState) (action.ServerState, error) {
	r, err := p.on.RunLong(ctx, p.args)
	switch {
	case err != nil && action.Sent(err):
		return action.ServerState{}, action.MayHaveRun(strings.ToUpper(p.args[0]), err)
	case err != nil:
		return action.ServerState{}, fmt.Errorf("%w: %v", action.ErrRedis, err)
	}
	text := strings.TrimSpace(r.Text)
	if strings.HasPrefix(text, "(error)") {
		return action.ServerState{}, fmt.Errorf("%w: the server answered %s", action.ErrRedis, text)
	}
	return action.ServerState{Target: s.Target, Value: "ran, answered " + r.Shape}, nil
}
