package action

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/redisview"
)

// An action on a server, not on keys (CONFIG SET, CLIENT KILL): its kind's
// Plan returns OnServer(node, plan). The Runner then does for the server
// what it does for keys — role check, read-only refusal, the preview's
// state read again and compared at the confirmation (ErrServerChanged),
// the confirmation claimed once, an intent record with the prior state
// before the change and an outcome record after it — and undo writes the
// prior state back where the kind knows how (ServerUndoer).
//
// A server's settings cannot be WATCHed (WATCH guards keys) and CONFIG is
// refused in scripts: the state is read, compared, recorded and changed in
// a few round trips, so a change someone else makes in the milliseconds
// between the read and the write is overwritten. The comparison guards the
// minutes between a preview and its confirmation, which is where people
// race.

// ServerPlan is one validated request of a kind acting on a server.
type ServerPlan interface {
	// Read reads the state the action changes on c, the server it acts on.
	// It runs at preview and again at the confirmation: a Value that differs
	// from the preview's refuses the confirmation (ErrServerChanged).
	Read(ctx context.Context, c redis.UniversalClient) (ServerState, error)
	// Describe says what will happen to s, or refuses (ErrInvalid for a
	// no-op, ErrNotFound for a client that is gone, ErrNotUndoable for an
	// undo whose state moved on). Change.Key is "".
	Describe(s ServerState) (Change, error)
	// Apply makes the change on c, once, after the intent record, and
	// returns the state it left (read back), which the outcome records.
	Apply(ctx context.Context, c redis.UniversalClient, s ServerState) (ServerState, error)
}

// ServerState is what a ServerPlan reads: the state it changes.
type ServerState struct {
	// Target names what is acted on, in words: "CONFIG maxmemory",
	// "client 42".
	Target string
	// Value is the state compared with the preview's and recorded: a
	// parameter's value, a client's identity (id, address, name, user).
	// Nothing sensitive may be in it (kinds refuse sensitive settings).
	Value  string
	Absent bool
	// Detail is shown, neither compared nor recorded: what changes on its
	// own (a client's idle time, its last command).
	Detail string
}

// ServerUndoer is implemented by a kind whose server actions can be
// undone: UndoServer plans writing t.Prior back, given the record of an
// action of this kind (its intent's prior, its outcome's after). The plan
// must refuse (ErrNotUndoable) when the state is no longer t.After.
type ServerUndoer interface {
	UndoServer(t ServerTarget) (ServerPlan, error)
}

// ServerTarget is the server an audit record's action acted on (field
// "server" of a record, JSON): where, what, and the state before (intent)
// and after (outcome).
type ServerTarget struct {
	// Node is the node's address ("" the connection's own server); Addr is
	// the address that answered, when known (a cluster node's).
	Node   string `json:"node,omitempty"`
	Target string `json:"target"`
	Prior  exact  `json:"prior,omitempty"` // intent: Value before
	After  exact  `json:"after,omitempty"` // outcome: Value after
	Absent bool   `json:"absent,omitempty"`
	// Kind is the kind that writes such a state back (ServerUndoer);
	// "" when it cannot be undone (a killed client).
	Kind string `json:"kind,omitempty"`
}

// ErrServerChanged: the server's state (a parameter's value, a client) is
// not the one previewed; nothing was changed. It is also ErrChanged.
var ErrServerChanged = errors.New("the server changed since you previewed it")

type serverChanged struct{ msg string }

func (e serverChanged) Error() string   { return e.msg }
func (e serverChanged) Unwrap() []error { return []error{ErrServerChanged, ErrChanged} }

// OnServer is the Plan of a kind acting on node ("" the connection's own
// server; on a cluster, a node CLUSTER NODES lists, see
// redisview.Conn.Server) rather than on keys.
func OnServer(node string, p ServerPlan) Plan { return serverPlanned{node: node, sp: p} }

// serverPlanned carries a ServerPlan through the Runner, which tells it
// from a key plan by its type; its key methods are never called.
type serverPlanned struct {
	node   string
	sp     ServerPlan
	undo   string // an undo: the outcome record it reverses
	kindOf string // the kind that writes the state back ("" none)
}

func (serverPlanned) Keys() []string { return nil }
func (serverPlanned) Describe([]State) ([]Change, error) {
	return nil, invalidf("a server action describes no keys")
}
func (serverPlanned) Apply(context.Context, redis.Pipeliner, []State) {}
func (p serverPlanned) undoes() string                                { return p.undo }

func (p serverPlanned) Notes() []string {
	if a, ok := p.sp.(Annotated); ok {
		return a.Notes()
	}
	return nil
}

// server is the client of the plan's node, and the node's address: on a
// cluster, the node "" resolved to (its first primary), which the preview
// shows, the fingerprint covers (a failover in between is a change) and
// the record keeps, so that undo acts on the very node; "" outside one.
func (p serverPlanned) server(ctx context.Context, conn *redisview.Conn) (redis.UniversalClient, string, error) {
	srv, err := conn.Server(ctx, p.node)
	if errors.Is(err, redisview.ErrUnknownNode) {
		return nil, "", fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if err != nil {
		return nil, "", redisErr("finding the server", err)
	}
	return srv.Client(), srv.Node.Addr, nil
}

// read reads the plan's state, explaining a refusal.
func (p serverPlanned) read(ctx context.Context, c redis.UniversalClient) (ServerState, error) {
	s, err := p.sp.Read(ctx, c)
	if err != nil && !isOurs(err) {
		err = redisErr("reading the server's state", err)
	}
	return s, err
}

// serverFP fingerprints a server state; keyed, so the token says nothing
// of the value even before the handler seals it.
func (r *Runner) serverFP(node string, s ServerState) string {
	m := hmac.New(sha256.New, r.secret)
	for _, part := range []string{"server", node, s.Target, s.Value, fmt.Sprint(s.Absent)} {
		writeName(m, part)
	}
	return "server:" + hex.EncodeToString(m.Sum(nil))
}

// undoKind is the kind that can write back a state this kind k changed.
func undoKind(k Kind, p serverPlanned) string {
	if p.kindOf != "" {
		return p.kindOf // an undo: the kind of the action it reverses
	}
	if _, ok := k.(ServerUndoer); ok {
		return k.Name()
	}
	return ""
}
