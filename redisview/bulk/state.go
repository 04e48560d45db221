package bulk

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"sync/atomic"

	"github.com/redis/go-redis/v9"
)

// State is what a batch reads of a key: enough to fingerprint it and to
// restore it exactly — or, for a key too large to read (Large), enough
// to fingerprint it without its value.
type State struct {
	Type     string // "none": absent
	ExpireAt int64  // PEXPIRETIME: ms since the epoch; -1 no expiry; -2 absent
	Dump     []byte // DUMP; nil when absent or Large
	// Large: the value is above the per-key cap (or its size could not be
	// measured), so it was never DUMPed; Len (its STRLEN, HLEN …) stands
	// in for it in the fingerprint.
	Large bool
	Len   int64
	// Memory is MEMORY USAGE (sampled), -1 when the server refused it.
	Memory int64
}

// Exists reports a key that was there.
func (s State) Exists() bool { return s.Type != "" && s.Type != "none" }

// stateCmds are one key's queued reads.
type stateCmds struct {
	typ  *redis.StatusCmd
	exp  *redis.Cmd
	dump *redis.StringCmd // nil: the value is not read
}

// queueState queues the reads of one key's state on p.
func queueState(ctx context.Context, p redis.Pipeliner, key string) stateCmds {
	return stateCmds{
		typ:  p.Type(ctx, key),
		exp:  p.Do(ctx, "PEXPIRETIME", key),
		dump: p.Dump(ctx, key),
	}
}

// queueAfter queues, inside a batch's MULTI, the reads of the state k
// leaves: a kind that changes only the expiry (or deletes) leaves the
// value it found, so its DUMP is not read a second time (stateAfter
// takes it from the state read before).
func queueAfter(ctx context.Context, p redis.Pipeliner, k Kind, key string) stateCmds {
	switch k.Name() {
	case KindDelete, KindExpire, KindPersist:
		return stateCmds{typ: p.Type(ctx, key), exp: p.Do(ctx, "PEXPIRETIME", key)}
	}
	return queueState(ctx, p, key)
}

// stateAfter is the state queueAfter read; before is the key's state
// read before the write.
func (c stateCmds) stateAfter(before State) (State, error) {
	s, err := c.state()
	if err != nil || !s.Exists() || c.dump != nil {
		return s, err
	}
	s.Dump, s.Large, s.Len = before.Dump, before.Large, before.Len
	return s, nil
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
	if c.dump == nil {
		return State{Type: typ, ExpireAt: exp}, nil
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

// printer fingerprints states with the engine's fingerprint key (loaded
// from the audit Redis before the first print: fingerprintKey).
type printer struct{ secret atomic.Pointer[[]byte] }

// print is s's fingerprint: Absent, or an HMAC of its type, absolute
// expiry and DUMP (32 hex digits); of a large key, of its type, expiry
// and length.
func (p *printer) print(s State) string {
	if !s.Exists() {
		return Absent
	}
	secret := p.secret.Load()
	if secret == nil {
		panic("bulk: a fingerprint before the fingerprint key was loaded")
	}
	m := hmac.New(sha256.New, *secret)
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(s.Type)))
	m.Write(n[:])
	m.Write([]byte(s.Type))
	binary.BigEndian.PutUint64(n[:], uint64(s.ExpireAt))
	m.Write(n[:])
	if s.Large {
		m.Write([]byte("large"))
		binary.BigEndian.PutUint64(n[:], uint64(s.Len))
		m.Write(n[:])
	} else {
		m.Write(s.Dump)
	}
	return hex.EncodeToString(m.Sum(nil)[:16])
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
