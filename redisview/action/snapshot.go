package action

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Snapshot is a key's value captured element by element. Keydeck records
// a key's prior value as DUMP where the server allows it; where it does
// not — an ACL user without DUMP or RESTORE, a managed service that forbids
// them, the embedded demo server, whose DUMP is not Redis's format — it
// reads the value with the type's own commands instead, and undo writes it
// back with them (DEL, then SET/HSET/RPUSH/SADD/ZADD, then PEXPIRE), in
// one MULTI.
//
// It is read only within the bounds a DUMP is (exact size, see readStates),
// so reading it whole is bounded. Elements are bytes and cross JSON exactly.
type Snapshot struct {
	Type string `json:"type"` // string, hash, list, set, zset
	// Value is a string's value.
	Value string `json:"-"`
	// Elems: hash field, value, field, value…; list items in order; set
	// members; zset member, score, member, score… (scores as Redis
	// formats them, which read back as the same double).
	Elems []string `json:"-"`
}

// Capture methods, as recorded in an audit Target ("" is DUMP, as records
// written before snapshots say).
const (
	captureDump     = "dump"
	captureSnapshot = "snapshot"
)

// captureHinter is implemented by a plan that needs some keys read a given
// way: undo reads a key as the action it reverses recorded it, and its
// transaction reads back what it restores as a snapshot of that type.
type captureHinter interface {
	captureHint(i int) (method, typ string)
}

func hintAt(p Plan, i int) (method, typ string) {
	if h, ok := p.(captureHinter); ok {
		return h.captureHint(i)
	}
	return "", ""
}

// bytes is the size of the elements, as an audit record holds them.
func (s *Snapshot) bytes() int64 {
	n := int64(len(s.Value))
	for _, e := range s.Elems {
		n += int64(len(e))
	}
	return n
}

func (s *Snapshot) empty() bool { return s.Type != "string" && len(s.Elems) == 0 }

// snapshotTypes are the types a Snapshot can hold. Streams (consumer
// groups, entry ids) are recorded only by DUMP.
func snapshotType(t string) bool {
	switch t {
	case "string", "hash", "list", "set", "zset":
		return true
	}
	return false
}

func (s Snapshot) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Type  string  `json:"type"`
		Value exact   `json:"value,omitempty"`
		Elems []exact `json:"elems,omitempty"`
	}{s.Type, exact(s.Value), exactSlice(s.Elems)})
}

func (s *Snapshot) UnmarshalJSON(b []byte) error {
	var w struct {
		Type  string  `json:"type"`
		Value exact   `json:"value"`
		Elems []exact `json:"elems"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*s = Snapshot{Type: w.Type, Value: string(w.Value), Elems: stringSlice(w.Elems)}
	return nil
}

// valid reports whether a recorded snapshot can be written back.
func (s Snapshot) valid() bool {
	switch s.Type {
	case "string":
		return len(s.Elems) == 0
	case "hash", "zset":
		if len(s.Elems)%2 != 0 || len(s.Elems) == 0 {
			return false
		}
		if s.Type == "zset" {
			for i := 1; i < len(s.Elems); i += 2 {
				if _, ok := parseScore(s.Elems[i]); !ok {
					return false
				}
			}
		}
		return true
	case "list", "set":
		return len(s.Elems) > 0
	}
	return false
}

// snapshotRead is the one command that reads a key's whole value of type t.
func snapshotRead(ctx context.Context, p redis.Pipeliner, t, key string) redis.Cmder {
	switch t {
	case "string":
		return p.Get(ctx, key)
	case "hash":
		return p.HGetAll(ctx, key)
	case "list":
		return p.LRange(ctx, key, 0, -1)
	case "set":
		return p.SMembers(ctx, key)
	case "zset":
		return p.ZRangeWithScores(ctx, key, 0, -1)
	}
	return nil
}

// snapshotOf decodes snapshotRead's reply. The same decoder serves the
// state read before an action and the one inside its transaction, so the
// two fingerprints compare like with like.
func snapshotOf(t string, c redis.Cmder) (*Snapshot, error) {
	if err := c.Err(); err != nil {
		return nil, err
	}
	s := &Snapshot{Type: t}
	switch c := c.(type) {
	case *redis.StringCmd:
		s.Value = c.Val()
	case *redis.MapStringStringCmd:
		for f, v := range c.Val() {
			s.Elems = append(s.Elems, f, v)
		}
	case *redis.StringSliceCmd:
		s.Elems = c.Val()
	case *redis.ZSliceCmd:
		for _, z := range c.Val() {
			m, _ := z.Member.(string)
			s.Elems = append(s.Elems, m, formatScore(z.Score))
		}
	default:
		return nil, fmt.Errorf("unexpected reply %T", c)
	}
	return s, nil
}

// digest hashes the value so that equal values give equal digests: hashes,
// sets and sorted sets sorted by field or member (their reply order is the
// server's), lists in order, every element length-prefixed.
func (s *Snapshot) digest() []byte {
	h := sha256.New()
	h.Write([]byte("snapshot\x00" + s.Type + "\x00"))
	var l [8]byte
	put := func(b string) {
		binary.BigEndian.PutUint64(l[:], uint64(len(b)))
		h.Write(l[:])
		h.Write([]byte(b))
	}
	switch s.Type {
	case "string":
		put(s.Value)
	case "list":
		for _, e := range s.Elems {
			put(e)
		}
	case "set":
		for _, e := range slices.Sorted(slices.Values(s.Elems)) {
			put(e)
		}
	case "hash", "zset":
		for _, p := range s.pairs() {
			put(p[0])
			put(p[1])
		}
	}
	return h.Sum(nil)
}

// pairs are a hash's or sorted set's elements, sorted by field or member.
func (s *Snapshot) pairs() [][2]string {
	out := make([][2]string, 0, len(s.Elems)/2)
	for i := 0; i+1 < len(s.Elems); i += 2 {
		out = append(out, [2]string{s.Elems[i], s.Elems[i+1]})
	}
	slices.SortFunc(out, func(a, b [2]string) int { return strings.Compare(a[0], b[0]) })
	return out
}

// restoreChunk bounds the arguments of one write command.
const restoreChunk = 512

// restore queues the writes that put the value back, replacing whatever
// the key holds, with ttl (0: none).
func (s *Snapshot) restore(ctx context.Context, tx redis.Pipeliner, key string, ttl time.Duration) {
	tx.Del(ctx, key)
	chunks := func(per int, cmd string) {
		for i := 0; i < len(s.Elems); i += restoreChunk * per {
			end := min(i+restoreChunk*per, len(s.Elems))
			args := []any{cmd, key}
			if cmd == "zadd" {
				for j := i; j+1 < end; j += 2 {
					args = append(args, s.Elems[j+1], s.Elems[j]) // score, member
				}
			} else {
				for _, e := range s.Elems[i:end] {
					args = append(args, e)
				}
			}
			tx.Do(ctx, args...)
		}
	}
	switch s.Type {
	case "string":
		tx.Set(ctx, key, s.Value, 0)
	case "hash":
		chunks(2, "hset")
	case "list":
		chunks(1, "rpush")
	case "set":
		chunks(1, "sadd")
	case "zset":
		chunks(2, "zadd")
	}
	if ttl > 0 {
		tx.PExpire(ctx, key, ttl)
	}
}

// Words describes the value for people, never whole: "3 fields: score=4096,
// moves=300, …". Elements are attacker-controlled: views escape them.
func (s *Snapshot) Words() string {
	const show = 5
	quote := func(e string) string { return fmt.Sprintf("%q", clipText(e, 60)) }
	var parts []string
	n := 0
	switch s.Type {
	case "string":
		return fmt.Sprintf("string of %d bytes: %s", len(s.Value), quote(s.Value))
	case "hash", "zset":
		n = len(s.Elems) / 2
		for _, p := range s.pairs() {
			if len(parts) == show {
				break
			}
			if s.Type == "hash" {
				parts = append(parts, quote(p[0])+"="+quote(p[1]))
			} else {
				parts = append(parts, quote(p[0])+" ("+p[1]+")")
			}
		}
	default:
		n = len(s.Elems)
		for _, e := range s.Elems[:min(show, n)] {
			parts = append(parts, quote(e))
		}
	}
	more := ""
	if n > len(parts) {
		more = fmt.Sprintf(", … %d more", n-len(parts))
	}
	return fmt.Sprintf("%s of %d %s: %s%s", s.Type, n, snapshotUnit(s.Type, n), strings.Join(parts, ", "), more)
}

func snapshotUnit(t string, n int) string {
	unit := map[string]string{"hash": "field", "list": "item", "set": "member", "zset": "member"}[t]
	if n != 1 {
		unit += "s"
	}
	return unit
}

func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
