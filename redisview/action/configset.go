package action

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/server"
)

// ConfigSet changes one configuration parameter of one server (CONFIG
// SET), and undo sets it back. Sensitive parameters (passwords, ACL and
// TLS key files: server.SensitiveConfig) are refused: Keydeck neither
// reads nor writes them. A parameter the server will not change at run
// time is refused by the server at the confirmation, and its words shown.
type ConfigSet struct{}

func init() {
	Register(ConfigSet{})
}

const (
	maxParamBytes = 128
	maxValueBytes = 64 << 10
	maxNodeBytes  = 512
)

func (ConfigSet) Name() string    { return KindConfigSet }
func (ConfigSet) Title() string   { return "Change a setting" }
func (ConfigSet) Requires() Level { return Admin }
func (ConfigSet) Args() []Arg {
	return []Arg{
		{Name: ArgParameter, Help: "the configuration parameter, as CONFIG GET names it (slowlog-log-slower-than)"},
		{Name: ArgValue, Help: "its new value, as CONFIG SET takes it (10000, 100mb, yes)"},
		{Name: ArgNode, Help: "a cluster node's address (host:port); empty for the connection's own server"},
	}
}

func (ConfigSet) Plan(_ context.Context, _ Env, req Request) (Plan, error) {
	if err := checkArgs(req, ArgParameter, ArgValue, ArgNode); err != nil {
		return nil, err
	}
	node, err := nodeArg(req)
	if err != nil {
		return nil, err
	}
	param := req.Args[ArgParameter]
	value, ok := req.Args[ArgValue]
	switch {
	case param == "":
		return nil, invalidf("parameter is required")
	case len(param) > maxParamBytes || strings.ContainsAny(param, "*?[] \t\r\n\\"):
		return nil, invalidf("%q is not a configuration parameter's name (one name, no pattern)", param)
	case server.SensitiveConfig(param):
		return nil, fmt.Errorf("%w: %s holds a password or a secret's location; Keydeck neither reads nor changes it (change it in redis.conf or with redis-cli)", ErrForbidden, param)
	case !ok:
		return nil, invalidf("value is required (it may be empty)")
	case len(value) > maxValueBytes:
		return nil, invalidf("value longer than %d bytes", maxValueBytes)
	}
	return OnServer(node, configPlan{param: strings.ToLower(param), value: value}), nil
}

// UndoServer sets the parameter back to its prior value, only while it
// still holds the value the action left.
func (ConfigSet) UndoServer(t ServerTarget) (ServerPlan, error) {
	param, ok := strings.CutPrefix(t.Target, configTarget)
	if !ok || param == "" || server.SensitiveConfig(param) {
		return nil, notUndoablef("the record names %q, not a setting Keydeck may change", t.Target)
	}
	return configPlan{param: param, value: string(t.Prior), undo: true, after: string(t.After)}, nil
}

func nodeArg(req Request) (string, error) {
	node := req.Args[ArgNode]
	if len(node) > maxNodeBytes || strings.ContainsAny(node, " \t\r\n") {
		return "", invalidf("%q is not a server address (host:port)", node)
	}
	return node, nil
}

const configTarget = "CONFIG "

type configPlan struct {
	param, value string
	// undo: value is the prior value recorded, and after the value the
	// action left, which the parameter must still hold.
	undo  bool
	after string
}

func (p configPlan) Read(ctx context.Context, c redis.UniversalClient) (ServerState, error) {
	v, ok, err := server.ConfigValue(ctx, redisview.ServerFor(c), p.param)
	if errors.Is(err, server.ErrRefused) {
		// The server's own words, as a refusal (ACL, a managed Redis):
		// not an outage, and the confirmation is not given back.
		return ServerState{}, fmt.Errorf("%w: %v", ErrForbidden, err)
	}
	if err != nil {
		return ServerState{}, err
	}
	if !ok {
		return ServerState{}, invalidf("this server has no configuration parameter %q (CONFIG GET does not list it)", p.param)
	}
	return ServerState{Target: configTarget + p.param, Value: v}, nil
}

func (p configPlan) Describe(s ServerState) (Change, error) {
	if p.undo {
		if s.Value != p.after {
			return Change{}, notUndoablef("%s is now %s, not %s as the action left it; setting it back would discard that later change", p.param, valueText(s.Value), valueText(p.after))
		}
		return Change{Op: "config-set", After: valueText(p.value), Before: State{Type: "config"},
			Text: fmt.Sprintf("%s: %s → %s (as before the action)", p.param, valueText(s.Value), valueText(p.value))}, nil
	}
	if s.Value == p.value {
		return Change{}, invalidf("%s is already %s: nothing to change", p.param, valueText(p.value))
	}
	return Change{Op: "config-set", After: valueText(p.value), Before: State{Type: "config"},
		Text: fmt.Sprintf("%s: %s → %s", p.param, valueText(s.Value), valueText(p.value))}, nil
}

func (p configPlan) Apply(ctx context.Context, c redis.UniversalClient, s ServerState) (ServerState, error) {
	if err := c.ConfigSet(ctx, p.param, p.value).Err(); err != nil {
		var rerr redis.Error
		if errors.As(err, &rerr) {
			// The server's own words: "can't set immutable config",
			// "argument must be a memory value", …
			return ServerState{}, redisf("Redis refused to set %s to %s: %s", p.param, valueText(p.value), err.Error())
		}
		return ServerState{}, err
	}
	// Read back: the server may write the value its own way (100mb is
	// 104857600), and undo compares with what it holds.
	return p.Read(ctx, c)
}

// valueText shows a setting's value, quoted when it would not read as one
// word, capped.
func valueText(v string) string {
	const max = 200
	if len(v) > max {
		return fmt.Sprintf("%q…", v[:max])
	}
	if v == "" || strings.ContainsAny(v, " \"'\t\r\n") || strings.ToValidUTF8(v, "") != v {
		return fmt.Sprintf("%q", v)
	}
	return v
}
