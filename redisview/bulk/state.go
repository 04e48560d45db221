package bulk

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"

	"github.com/redis/go-redis/v9"
)

// State is what a batch reads of a key: enough to fingerprint it and to
// restore it exactly.
type State struct {
	Type     string // "none": absent
	ExpireAt int64  // PEXPIRETIME: ms since the epoch; -1 no expiry; -2 absent
	Dump     []byte // DUMP; nil when absent
}

// Exists reports a key that was there.
func (s State) Exists() bool { return s.Type != "" && s.Type != "none" }

// stateCmds are one key's queued reads.
type stateCmds struct {
	typ  *redis.StatusCmd
	exp  *redis.Cmd
	dump *redis.StringCmd
}

// queueState queues the reads of one key's state on p.
func queueState(ctx context.Context, p redis.Pipeliner, key string) stateCmds {
	return stateCmds{
		typ:  p.Type(ctx, key),
		exp:  p.Do(ctx, "PEXPIRETIME", key),
		dump: p.Dump(ctx, key),
	}
}

// state is the key's state from its replies (after Exec).
func (c stateCmds) state() (State, error) {
	typ, err := c.typ.Result()
	if err != nil {
		return State{}, err
	}
	if typ == "none" {
		return State{Type: "none", ExpireAt: -2}, nil
	}
	exp, err := c.exp.Int64()
	if err != nil {
		return State{}, err
	}
	d, err := c.dump.Result()
	if errors.Is(err, redis.Nil) {
		// Gone between TYPE and DUMP cannot happen in one pipeline on one
		// server, but a MULTI's read of a key it just deleted can.
		return State{Type: "none", ExpireAt: -2}, nil
	}
	if err != nil {
		return State{}, err
	}
	return State{Type: typ, ExpireAt: exp, Dump: []byte(d)}, nil
}

// printer fingerprints states with the engine's secret.
type printer struct{ secret []byte }

// print is s's fingerprint: Absent, or an HMAC of its type, absolute
// expiry and DUMP (32 hex digits).
func (p printer) print(s State) string {
	if !s.Exists() {
		return Absent
	}
	m := hmac.New(sha256.New, p.secret)
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(s.Type)))
	m.Write(n[:])
	m.Write([]byte(s.Type))
	binary.BigEndian.PutUint64(n[:], uint64(s.ExpireAt))
	m.Write(n[:])
	m.Write(s.Dump)
	return hex.EncodeToString(m.Sum(nil)[:16])
}

// readStates reads the states of keys in one pipeline.
func readStates(ctx context.Context, c redis.Cmdable, keys []string) ([]State, error) {
	p := c.Pipeline()
	cmds := make([]stateCmds, len(keys))
	for i, k := range keys {
		cmds[i] = queueState(ctx, p, k)
	}
	if _, err := p.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return nil, err
	}
	return collect(cmds)
}

func collect(cmds []stateCmds) ([]State, error) {
	out := make([]State, len(cmds))
	for i, c := range cmds {
		s, err := c.state()
		if err != nil {
			return nil, err
		}
		out[i] = s
	}
	return out, nil
}
