package action

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/views/format"
)

// DefaultStream is the audit stream's key.
const DefaultStream = "keydeck:audit"

// DefaultMaxLen caps the audit stream (XADD MAXLEN ~).
const DefaultMaxLen = 100000

// PriorSensitive stands in for the prior value of a sensitive key.
const PriorSensitive = "(sensitive, not recorded)"

// Phases and outcomes of audit records.
const (
	PhaseIntent  = "intent"  // written before the change; holds the prior values
	PhaseOutcome = "outcome" // written after; Ref names the intent

	OutcomeOK      = "ok"
	OutcomeFailed  = "failed"  // attempted; Redis or a concurrent change stopped it
	OutcomeRefused = "refused" // Keydeck declined before writing (role, arguments, undo rules)
	OutcomeUnknown = "unknown" // sent, its reply lost: it may have run (ErrOutcomeUnknown)
)

// How long an undo's claim on a record lasts if its outcome is never
// written (the audit server died mid-undo); after that the record may be
// undone again, still guarded by its fingerprints.
const (
	claimPending = 10 * time.Minute
	claimDone    = 400 * 24 * time.Hour
	claimPendVal = "pending"
)

// Record is one entry of the audit stream. Every record is self-describing
// (who, what, where), so a filtered page never needs its partner record.
type Record struct {
	ID      string            `json:"id"` // stream id
	Time    time.Time         `json:"time"`
	Phase   string            `json:"phase"`
	Ref     string            `json:"ref,omitempty"` // outcome: the intent it concludes
	User    string            `json:"user"`
	Level   string            `json:"role"` // the person's level (action.Level)
	Action  string            `json:"action"`
	Conn    string            `json:"conn"`
	DB      int               `json:"db"`
	Keys    []string          `json:"keys"`
	Args    map[string]string `json:"args,omitempty"`
	Summary string            `json:"summary"`
	Targets []Target          `json:"targets,omitempty"`
	// Server is the server an action on a server acted on (see
	// ServerTarget); nil for actions on keys.
	Server  *ServerTarget `json:"server,omitempty"`
	Outcome string        `json:"outcome,omitempty"` // outcome records only
	Error   string        `json:"error,omitempty"`
	Undoes  string        `json:"undoes,omitempty"` // undo: the outcome record it reverses
	// UndoneBy is filled by ReadAudit for successful outcomes an undo has
	// claimed: the undo's intent id, or "pending" while it runs.
	UndoneBy string `json:"undone_by,omitempty"`
	// Token and TokenOwner: the API token that acted (its name) and its
	// owner, when one did; User then says both ("alice (token ci-bot)").
	Token      string `json:"token,omitempty"`
	TokenOwner string `json:"token_owner,omitempty"`
}

// Target is one key of a record. Intent records hold the state before
// (Prior, Before, PTTL); outcome records the state after (After, PTTL).
type Target struct {
	Key       string `json:"key"`
	Type      string `json:"type,omitempty"` // "none": absent
	Family    string `json:"family,omitempty"`
	Sensitive bool   `json:"sensitive,omitempty"`
	Size      int64  `json:"size,omitempty"`
	Unit      string `json:"unit,omitempty"`
	PTTL      int64  `json:"pttl"`             // ms remaining; -1 no TTL; -2 absent
	Prior     string `json:"prior,omitempty"`  // base64 DUMP, or PriorSensitive; "" when absent
	Before    string `json:"before,omitempty"` // fingerprint before (not for sensitive keys)
	After     string `json:"after,omitempty"`  // fingerprint after (not for sensitive keys)
	// Member is set for a sorted set the action changed one member of
	// (MemberPlan): that member before (intent) or after (outcome), which
	// Before and After fingerprint. Prior is then empty: the key is not
	// DUMPed. Records without it describe whole keys, as they always did.
	Member *MemberState `json:"member,omitempty"`
	// Snapshot is the prior value element-wise (intent records), where the
	// server refused DUMP; Prior is then empty. Capture says how the
	// state was read ("snapshot"; "" is DUMP), so undo reads it alike.
	Snapshot *Snapshot `json:"snapshot,omitempty"`
	Capture  string    `json:"capture,omitempty"`
}

// Undoable reports whether r is a successful outcome an undo may reverse
// (the intent's priors are checked by undo itself); a write of Keydeck's
// own (Own) is not.
func (r Record) Undoable() bool {
	if r.Server != nil && r.Server.Kind == "" {
		return false // a killed client cannot be brought back
	}
	return r.Phase == PhaseOutcome && r.Outcome == OutcomeOK && r.UndoneBy == "" && !r.Own()
}

func (r Record) fields() []any {
	kv := []any{"v", "1", "phase", r.Phase}
	add := func(k, v string) {
		if v != "" {
			kv = append(kv, k, v)
		}
	}
	add("ref", r.Ref)
	add("time", r.Time.UTC().Format(time.RFC3339Nano))
	add("user", r.User)
	add("role", r.Level)
	add("token", r.Token)
	add("token_owner", r.TokenOwner)
	add("action", r.Action)
	add("conn", r.Conn)
	kv = append(kv, "db", strconv.Itoa(r.DB))
	if len(r.Keys) > 0 {
		add("key", r.Keys[0])
		add("keys", mustJSON(exactSlice(r.Keys)))
	}
	if len(r.Args) > 0 {
		add("args", mustJSON(exactMap(r.Args)))
	}
	add("summary", r.Summary)
	if len(r.Targets) > 0 {
		add("targets", mustJSON(r.Targets))
	}
	if r.Server != nil {
		add("server", mustJSON(r.Server))
	}
	add("outcome", r.Outcome)
	add("error", r.Error)
	add("undoes", r.Undoes)
	return kv
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // strings, ints and maps of strings always marshal
	}
	return string(b)
}

func parseRecord(m redis.XMessage) Record {
	str := func(k string) string { s, _ := m.Values[k].(string); return s }
	r := Record{
		ID: m.ID, Phase: str("phase"), Ref: str("ref"), User: str("user"), Level: str("role"),
		Action: str("action"), Conn: str("conn"), Summary: str("summary"),
		Outcome: str("outcome"), Error: str("error"), Undoes: str("undoes"),
		Token: str("token"), TokenOwner: str("token_owner"),
	}
	r.Time, _ = time.Parse(time.RFC3339Nano, str("time"))
	r.DB, _ = strconv.Atoi(str("db"))
	// Malformed JSON leaves the field empty rather than hiding the record.
	// Names are carried byte-exact (see exact); the "key" field, written
	// raw, stands in for records without "keys".
	var keys []exact
	_ = json.Unmarshal([]byte(str("keys")), &keys)
	r.Keys = stringSlice(keys)
	if len(r.Keys) == 0 && str("key") != "" {
		r.Keys = []string{str("key")}
	}
	var args map[string]exact
	_ = json.Unmarshal([]byte(str("args")), &args)
	r.Args = stringMap(args)
	_ = json.Unmarshal([]byte(str("targets")), &r.Targets)
	if s := str("server"); s != "" {
		var t ServerTarget
		if json.Unmarshal([]byte(s), &t) == nil {
			r.Server = &t
		}
	}
	return r
}

// Audit is the audit stream on its own server and database.
type Audit struct {
	client *redis.Client
	stream string
	maxLen int64
}

// NewAudit addresses the stream key on client (stream "" is DefaultStream;
// maxLen ≤ 0 is DefaultMaxLen).
func NewAudit(client *redis.Client, stream string, maxLen int64) *Audit {
	if stream == "" {
		stream = DefaultStream
	}
	if maxLen <= 0 {
		maxLen = DefaultMaxLen
	}
	return &Audit{client: client, stream: stream, maxLen: maxLen}
}

// Stream is the stream's key.
func (a *Audit) Stream() string { return a.stream }

func (a *Audit) xadd(ctx context.Context, p redis.Cmdable, r Record) *redis.StringCmd {
	return p.XAdd(ctx, &redis.XAddArgs{Stream: a.stream, MaxLen: a.maxLen, Approx: true, Values: r.fields()})
}

func (a *Audit) claimKey(outcomeID string) string { return a.stream + ":undone:" + outcomeID }

// claimConfirmation marks a preview's confirmation used (SET NX, on the
// audit server every replica shares), for as long as the preview could be
// confirmed at all. A second claim is refused.
func (a *Audit) claimConfirmation(ctx context.Context, nonce string, ttl time.Duration) error {
	ok, err := a.client.SetNX(ctx, a.stream+":confirmed:"+nonce, "1", ttl).Result()
	switch {
	case err != nil:
		return auditErr(err)
	case !ok:
		return invalidf("this confirmation was already used; a confirmed action runs once, preview it again to repeat it")
	}
	return nil
}

// releaseConfirmation frees a claimed confirmation that changed nothing
// (Redis failed before the change, or was found unchanged after a lost
// connection), so that it can be confirmed again: it has not run. Best
// effort, past the caller's context: a claim left expires with the
// preview.
func (a *Audit) releaseConfirmation(ctx context.Context, nonce string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), auditDeadline)
	defer cancel()
	_ = a.client.Del(ctx, a.stream+":confirmed:"+nonce).Err()
}

func auditErr(err error) error {
	return fmt.Errorf("%w: nothing was changed, because the action could not be recorded first: %v", ErrAuditUnavailable, err)
}

// writeIntent records r before the change. For an undo it also claims the
// record being undone, in the same transaction, so two admins undoing the
// same action cannot both pass.
func (a *Audit) writeIntent(ctx context.Context, r Record) (string, error) {
	if r.Undoes == "" {
		id, err := a.xadd(ctx, a.client, r).Result()
		if err != nil {
			return "", auditErr(err)
		}
		return id, nil
	}
	var id string
	claim := a.claimKey(r.Undoes)
	err := a.client.Watch(ctx, func(tx *redis.Tx) error {
		by, err := tx.Get(ctx, claim).Result()
		switch {
		case err == nil:
			return alreadyUndone(r.Undoes, by)
		case err != redis.Nil:
			return auditErr(err)
		}
		var add *redis.StringCmd
		_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
			add = a.xadd(ctx, p, r)
			p.Set(ctx, claim, claimPendVal, claimPending)
			return nil
		})
		if errors.Is(err, redis.TxFailedErr) {
			return notUndoablef("another undo of record %s started at the same moment", r.Undoes)
		}
		if err != nil {
			return auditErr(err)
		}
		id = add.Val()
		return nil
	}, claim)
	if err != nil && !errors.Is(err, ErrNotUndoable) && !errors.Is(err, ErrAuditUnavailable) {
		err = auditErr(err)
	}
	return id, err
}

func alreadyUndone(id, by string) error {
	if by == claimPendVal {
		return notUndoablef("an undo of record %s is in progress (if its server went away, retry in %s)", id, format.Duration(claimPending))
	}
	return notUndoablef("record %s was already undone (undo intent %s)", id, by)
}

// writeOutcome records how the action ended and, for an undo, settles its
// claim: kept when it succeeded, released when it did not.
func (a *Audit) writeOutcome(ctx context.Context, r Record, intentID string) (string, error) {
	var add *redis.StringCmd
	_, err := a.client.TxPipelined(ctx, func(p redis.Pipeliner) error {
		add = a.xadd(ctx, p, r)
		if r.Undoes != "" && intentID != "" {
			if r.Outcome == OutcomeOK {
				p.Set(ctx, a.claimKey(r.Undoes), intentID, claimDone)
			} else {
				p.Del(ctx, a.claimKey(r.Undoes))
			}
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	return add.Val(), nil
}

// Get reads one record by its stream id.
func (a *Audit) Get(ctx context.Context, id string) (Record, error) {
	if !validID(id) {
		return Record{}, invalidf("%q is not an audit record id", id)
	}
	msgs, err := a.client.XRange(ctx, a.stream, id, id).Result()
	if err != nil {
		return Record{}, fmt.Errorf("%w: reading the audit log: %v", ErrAuditUnavailable, err)
	}
	if len(msgs) == 0 {
		return Record{}, fmt.Errorf("%w: no audit record %s (it may have been trimmed from the capped log)", ErrNotFound, id)
	}
	return parseRecord(msgs[0]), nil
}

// claimOf returns who claimed record id for undo ("" if nobody).
func (a *Audit) claimOf(ctx context.Context, id string) (string, error) {
	by, err := a.client.Get(ctx, a.claimKey(id)).Result()
	if err == redis.Nil {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("%w: reading the audit log: %v", ErrAuditUnavailable, err)
	}
	return by, nil
}

func validID(id string) bool {
	ms, seq, ok := strings.Cut(id, "-")
	if !ok {
		return false
	}
	_, err1 := strconv.ParseUint(ms, 10, 64)
	_, err2 := strconv.ParseUint(seq, 10, 64)
	return err1 == nil && err2 == nil
}

// Beside reports whether the audit stream is stored on the server cl talks
// to (the same run_id), and in which of its databases: a command that
// empties a server or a database (FLUSHALL, FLUSHDB) must not erase the
// record of what was done. An error means it could not be told.
func (a *Audit) Beside(ctx context.Context, cl redis.UniversalClient) (same bool, db int, err error) {
	ours, err := runID(ctx, a.client)
	if err != nil {
		return false, 0, err
	}
	theirs, err := runID(ctx, cl)
	if err != nil {
		return false, 0, err
	}
	return ours == theirs, a.client.Options().DB, nil
}

func runID(ctx context.Context, cl redis.UniversalClient) (string, error) {
	txt, err := cl.Info(ctx, "server").Result()
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(txt, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "run_id:"); ok && v != "" {
			return v, nil
		}
	}
	return "", errors.New("INFO server names no run_id")
}
