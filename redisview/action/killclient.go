package action

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/server"
	"github.com/keydeck/keydeck/views/format"
)

// KillClient closes one client connection of one server (CLIENT KILL ID).
// It cannot be undone, which the preview says first. Keydeck's own
// connections (named server.OwnClientName) are refused: killing them only
// makes Keydeck reconnect, or cuts the page that asked.
type KillClient struct{}

func init() {
	Register(KillClient{})
}

func (KillClient) Name() string    { return KindKillClient }
func (KillClient) Title() string   { return "Kill client" }
func (KillClient) Requires() Level { return Admin }
func (KillClient) Args() []Arg {
	return []Arg{
		{Name: ArgClientID, Help: "the client's id, as CLIENT LIST gives it"},
		{Name: ArgNode, Help: "a cluster node's address (host:port); empty for the connection's own server"},
	}
}

// NotUndoable is what the confirmation step says first.
func (KillClient) NotUndoable() string {
	return "Killing a client cannot be undone: its connection is closed, and only the application can open a new one (most client libraries reconnect by themselves; anything it had in flight, a MULTI or a blocking read, is lost)."
}

func (KillClient) Plan(_ context.Context, _ Env, req Request) (Plan, error) {
	if err := checkArgs(req, ArgClientID, ArgNode); err != nil {
		return nil, err
	}
	node, err := nodeArg(req)
	if err != nil {
		return nil, err
	}
	id, err := strconv.ParseInt(req.Args[ArgClientID], 10, 64)
	if err != nil || id <= 0 {
		return nil, invalidf("id %q is not a client id (a positive number, as CLIENT LIST gives it)", req.Args[ArgClientID])
	}
	return OnServer(node, killPlan{id: id}), nil
}

type killPlan struct{ id int64 }

func (p killPlan) target() string { return "client " + strconv.FormatInt(p.id, 10) }

func (p killPlan) Read(ctx context.Context, c redis.UniversalClient) (ServerState, error) {
	srv := redisview.ServerFor(c)
	cl, ok, err := server.ClientByID(ctx, srv, p.id)
	if errors.Is(err, server.ErrRefused) && !strings.Contains(err.Error(), "NOPERM") {
		// CLIENT LIST ID is Redis 6.2's: an older server reads the whole
		// list, which it answers (refused in turn: said below).
		cl, ok, err = clientInList(ctx, srv, p.id)
	}
	if errors.Is(err, server.ErrRefused) {
		// The server's own words, as a refusal: not an outage, and the
		// confirmation is not given back to be tried again.
		return ServerState{}, fmt.Errorf("%w: the client cannot be previewed on this server, so it is not killed: %v", ErrForbidden, err)
	}
	if err != nil {
		return ServerState{}, err
	}
	if !ok {
		return ServerState{Target: p.target(), Absent: true}, nil
	}
	// Identity only: age and idle move every second, and must not make
	// the confirmation fail.
	return ServerState{Target: p.target(),
		Value: fmt.Sprintf("id=%d addr=%s laddr=%s name=%s user=%s", cl.ID, cl.Addr, cl.LAddr, cl.Name, cl.User),
		Detail: fmt.Sprintf("address %s, name %s, user %s, db %d, connected %s, idle %s, last command %s",
			cl.Addr, nameOrNone(cl.Name), nameOrNone(cl.User), cl.DB, format.Duration(cl.Age), format.Duration(cl.Idle), nameOrNone(cl.Cmd)),
	}, nil
}

// clientInList finds client id in the whole CLIENT LIST.
func clientInList(ctx context.Context, srv redisview.Server, id int64) (server.Client, bool, error) {
	all, err := server.Clients(ctx, srv)
	if err != nil {
		return server.Client{}, false, err
	}
	for _, cl := range all {
		if cl.ID == id {
			return cl, true, nil
		}
	}
	return server.Client{}, false, nil
}

func nameOrNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return fmt.Sprintf("%q", s)
}

func (p killPlan) Describe(s ServerState) (Change, error) {
	if s.Absent {
		return Change{}, fmt.Errorf("%w: client %d is not connected to this server (it closed, or was killed)", ErrNotFound, p.id)
	}
	if strings.Contains(s.Value, " name="+server.OwnClientName+" ") {
		return Change{}, fmt.Errorf("%w: client %d is one of Keydeck's own connections (named %q); killing it would only make Keydeck reconnect", ErrForbidden, p.id, server.OwnClientName)
	}
	return Change{Op: "kill-client", After: "disconnected", Before: State{Type: "client"},
		Text: fmt.Sprintf("KILL client %d (%s)", p.id, s.Detail)}, nil
}

func (p killPlan) Apply(ctx context.Context, c redis.UniversalClient, _ ServerState) (ServerState, error) {
	n, err := c.ClientKillByFilter(ctx, "ID", strconv.FormatInt(p.id, 10)).Result()
	if err != nil {
		return ServerState{}, err
	}
	if n == 0 {
		return ServerState{}, fmt.Errorf("%w: client %d closed before it could be killed", ErrNotFound, p.id)
	}
	return ServerState{Target: p.target(), Absent: true}, nil
}
