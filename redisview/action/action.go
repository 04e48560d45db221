package action

import (
	"context"
	"maps"
	"slices"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/redisview"
)

// Kind is one named action ("delete-key", "reset-limit", "force-unlock",
// "remove-leaderboard-entry", later "unban").
// A kind only validates its request, names the keys it touches, describes
// the change and queues its writes; the Runner does the rest (role check,
// reading state, fingerprints, audit, the transaction), so a new kind
// cannot forget any of it.
type Kind interface {
	Name() string    // stable identifier, recorded in the audit log
	Title() string   // for buttons and headings: "Delete key"
	Requires() Level // the lowest level that may run it
	Args() []Arg     // what the confirmation form asks for
	// Plan validates req (wrap ErrInvalid with a message) and decides which
	// keys the action touches. It may read, never write: undo reads the
	// audit log here.
	Plan(ctx context.Context, env Env, req Request) (Plan, error)
}

// Plan is one validated request, ready to be previewed or executed.
type Plan interface {
	// Keys are every key the action reads or writes, all in Request.DB of
	// one connection (one MULTI). They are WATCHed, fingerprinted and their
	// prior state recorded, in this order.
	Keys() []string
	// Describe says what will happen to each key in its current state, one
	// Change per key, or refuses (ErrNotFound for a missing key, ErrInvalid
	// for a no-op, ErrNotUndoable for undo). It runs at preview and again
	// under WATCH at execution, so it sees the state it will change.
	Describe(states []State) ([]Change, error)
	// Apply queues the writes inside MULTI. It must only queue commands on
	// Keys(): anything else is neither watched nor recorded.
	Apply(ctx context.Context, tx redis.Pipeliner, states []State)
}

// Request names what to act on. Every field comes from the browser: kinds
// validate Args, the Runner validates the rest.
type Request struct {
	Conn string            `json:"c"`
	DB   int               `json:"d"`
	Key  string            `json:"k,omitempty"`
	Args map[string]string `json:"a,omitempty"`
}

// Arg describes one argument a kind takes, for the form.
type Arg struct {
	Name string
	Help string // "a duration from 1s to 365d (10m, 2h, 7d), or persist"
	// Data marks an argument that names data inside the key (a member):
	// withheld from the audit record when the key is sensitive.
	Data bool
	// Input is how a form asks for it: "" a one-line text field, or
	// InputTextarea, InputSelect (one of Choices, the first preselected),
	// InputCheckbox (sent as "true" when ticked) or InputNumber.
	Input   string
	Choices []string
	// Optional: the form may leave it empty.
	Optional bool
}

// Inputs of an Arg (Arg.Input).
const (
	InputTextarea = "textarea"
	InputSelect   = "select"
	InputCheckbox = "checkbox"
	InputNumber   = "number"
)

// Env is what a kind may consult while planning.
type Env struct {
	Conn  *redisview.Conn
	Audit *Audit
	Now   time.Time
	// kindOf finds a kind by name (undo of a server action: the kind
	// that writes its state back).
	kindOf func(name string) (Kind, bool)
}

// Change is what one key will go through, in words and in structure.
type Change struct {
	Key    string `json:"key"`
	Op     string `json:"op"`    // "delete", "expire", "persist", "restore", "remove-member", "add-member"; "none": a key read and watched, left as is
	Text   string `json:"text"`  // "DELETE \"k\" (hash, 12 fields, TTL 4m 10s)"
	After  string `json:"after"` // the key afterwards: "absent", "TTL 10m", "no TTL", …
	Before State  `json:"before"`
}

// Preview is exactly what an action will do, shown on the confirmation
// step. Only Kind, Request, Fingerprints and Made travel to the confirm
// step (see Token); Execute describes the change again from the state it
// reads under WATCH, refusing if that state is not the one previewed.
type Preview struct {
	Kind    string   `json:"kind"`
	Title   string   `json:"title"`
	Request Request  `json:"request"`
	Changes []Change `json:"changes"`
	Summary string   `json:"summary"`
	// Undoable is false when a prior value will not be recorded (a
	// sensitive key): the confirmation step must say so.
	Undoable bool      `json:"undoable"`
	Notes    []string  `json:"notes,omitempty"`
	Made     time.Time `json:"made"`
	// Fingerprints identify the state of each key the preview was made
	// from (see fingerprint). A sensitive key's is keyed with the runner's
	// secret, so the token reveals nothing about its value.
	Fingerprints []string `json:"fingerprints"`
	// Nonce names this preview; Execute claims it once on the audit server,
	// so a confirmation cannot be replayed (after an undo restored the very
	// state it fingerprinted, say), on this replica or another.
	Nonce string `json:"-"`
	// Server is set for an action on a server (OnServer): which node
	// and what on it; nil for an action on keys.
	Server *ServerTarget `json:"server,omitempty"`
	// UndoNote says why an action on a server cannot be undone (a killed
	// client); the confirmation step says it first.
	UndoNote string `json:"undo_note,omitempty"`
}

// Outcome is what Execute did.
type Outcome struct {
	Kind    string
	Request Request
	Changes []Change
	Summary string
	// IntentID and ID are the audit records written before and after the
	// change. Undo takes ID.
	IntentID string
	ID       string
	Undoable bool
	// AuditWarning is set when the change happened but its outcome record
	// could not be written (the audit server went away mid-action): the
	// intent record still names it, but it cannot be undone from the log.
	AuditWarning string
}

func cloneRequest(req Request) Request {
	req.Args = maps.Clone(req.Args)
	return req
}

// checkArgs refuses arguments a kind does not take: a typo must not be
// silently ignored on a production write.
func checkArgs(req Request, allowed ...string) error {
	for _, name := range slices.Sorted(maps.Keys(req.Args)) {
		if !slices.Contains(allowed, name) {
			return invalidf("unknown argument %q", name)
		}
	}
	return nil
}
