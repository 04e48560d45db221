package action

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
)

// AddStreamEntry appends one entry to a stream (XADD), with an id Redis
// picks (*) or an explicit one, which must be above the stream's last.
type AddStreamEntry struct{}

func init() { Register(AddStreamEntry{}) }

func (AddStreamEntry) Name() string    { return KindAddStreamEntry }
func (AddStreamEntry) Title() string   { return "Append entry" }
func (AddStreamEntry) Requires() Level { return Admin }
func (AddStreamEntry) KeyType() string { return "stream" }
func (AddStreamEntry) Args() []Arg {
	return []Arg{
		{Name: ArgFields, Help: `the entry's fields as a JSON object, in order: {"event": "login", "user": "42"}, or pairs [["event", "login"]]; any string may be {"b64": "…"} for bytes that are not text`, Data: true, Input: InputTextarea},
		{Name: ArgEntryID, Help: "its id: * (Redis picks the next) or an explicit one above the last (1700000000000-0)", Optional: true},
	}
}

// streamID is an id XADD takes: *, ms, ms-seq or ms-*.
var streamID = regexp.MustCompile(`^(\*|[0-9]{1,20}(-([0-9]{1,20}|\*))?)$`)

func (AddStreamEntry) Plan(ctx context.Context, env Env, req Request) (Plan, error) {
	if err := checkArgs(req, ArgFields, ArgEntryID); err != nil {
		return nil, err
	}
	if err := streamRecordable(ctx, env, req); err != nil {
		return nil, err
	}
	pairs, err := parsePairs(req.Args[ArgFields], ArgFields, false)
	if err != nil {
		return nil, err
	}
	id := req.Args[ArgEntryID]
	if id == "" {
		id = "*"
	}
	if !streamID.MatchString(id) || id == "0" || id == "0-0" {
		return nil, invalidf("entry id %q: want * or an id such as 1700000000000-0, above 0-0", id)
	}
	if err := checkTypeShape(familyOf(env, req.DB, req.Key), "stream"); err != nil {
		return nil, err
	}
	if err := idAboveLast(ctx, env, req, id); err != nil {
		return nil, err
	}
	return streamPlan{key: req.Key, id: id, pairs: pairs}, nil
}

// idAboveLast refuses an explicit id not above the stream's last entry's
// at the preview (one entry read), instead of at EXEC after the intent is
// recorded. An id without its sequence (ms or ms-*) is refused only below
// the last's time: Redis picks the sequence. Where the last entry cannot
// be read, EXEC decides.
func idAboveLast(ctx context.Context, env Env, req Request, id string) error {
	if id == "*" || env.Conn == nil {
		return nil
	}
	last, err := env.Conn.DB(req.DB).XRevRangeN(ctx, req.Key, "+", "-", 1).Result()
	if err != nil || len(last) == 0 {
		return nil
	}
	lms, lseq, _ := splitID(last[0].ID)
	ms, seq, hasSeq := splitID(id)
	if ms > lms || (ms == lms && (!hasSeq || seq > lseq)) {
		return nil
	}
	shown := last[0].ID
	if f := familyOf(env, req.DB, req.Key); f != nil && f.Sensitive {
		shown = "not shown: sensitive"
	}
	return invalidf("entry id %s is not above the stream's last (%s): Redis refuses it; use * or a higher id", id, shown)
}

// splitID reads ms-seq; hasSeq is false for ms or ms-*.
func splitID(id string) (ms, seq uint64, hasSeq bool) {
	a, b, found := strings.Cut(id, "-")
	ms, _ = strconv.ParseUint(a, 10, 64)
	if !found || b == "*" {
		return ms, 0, false
	}
	seq, _ = strconv.ParseUint(b, 10, 64)
	return ms, seq, true
}

// streamRecordable refuses a stream write where the server refuses DUMP
// (an ACL, a managed service): a stream has no element-wise reading
// (Snapshot), so its state after the write, read back by DUMP inside the
// transaction, would abort it (EXECABORT) instead of writing. An existing
// stream is refused there anyway, its prior being unreadable.
func streamRecordable(ctx context.Context, env Env, req Request) error {
	if env.Conn == nil {
		return nil
	}
	if err := env.Conn.DB(req.DB).Dump(ctx, req.Key).Err(); isUnsupported(err) {
		return invalidf("this server refuses DUMP (%v), the only way Keydeck records a stream, so a stream cannot be created or appended to here; grant DUMP to this user to write streams", err)
	}
	return nil
}

type streamPlan struct {
	key   string
	id    string
	pairs [][2]string
}

func (p streamPlan) Keys() []string { return []string{p.key} }

func (p streamPlan) Describe(states []State) ([]Change, error) {
	s := states[0]
	if err := wantType(s, "stream", false); err != nil {
		return nil, err
	}
	after := State{Key: s.Key, Type: "stream", PTTL: s.PTTL, Size: max(s.Size, 0) + 1, Unit: "entries"}
	return []Change{{
		Key: s.Key, Op: "append", After: after.Shape(), Before: s,
		Text: fmt.Sprintf("APPEND entry %s to %s: %s (before: %s)", p.id, quoteKey(s.Key), pairsWords(s, p.pairs), s.Shape()),
	}}, nil
}

func (p streamPlan) Apply(ctx context.Context, tx redis.Pipeliner, _ []State) {
	vals := make([]any, 0, 2*len(p.pairs))
	for _, kv := range p.pairs {
		vals = append(vals, kv[0], kv[1])
	}
	tx.XAdd(ctx, &redis.XAddArgs{Stream: p.key, ID: p.id, Values: vals})
}

// pairsWords describes fields and values: their count and, for a key that
// is not sensitive, the first few.
func pairsWords(s State, pairs [][2]string) string {
	if s.Sensitive {
		n := 0
		for _, p := range pairs {
			n += len(p[0]) + len(p[1])
		}
		return fmt.Sprintf("%d fields, %d bytes (sensitive, not shown)", len(pairs), n)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "%d fields", len(pairs))
	for i, p := range pairs {
		if i == 3 {
			b.WriteString(", …")
			break
		}
		fmt.Fprintf(&b, ", %q=%q", clipText(p[0], 40), clipText(p[1], 40))
	}
	return b.String()
}
