package bulk

import (
	"context"
	"errors"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/redisview"
)

// A key's value is read (DUMP) only once its size is known and under the
// per-key cap (Options.MaxKeyBytes): the size comes first from O(1)
// reads — TYPE, the type's length (STRLEN, HLEN, LLEN, SCARD, ZCARD,
// XLEN) and MEMORY USAGE with its default sampling (not SAMPLES 0, which
// walks the whole value). A key above the cap, or an aggregate whose
// memory the server will not say, is fingerprinted without its value
// (State.Large) and makes its job not undoable; it is never DUMPed.

// size is what is known of a key's value before reading it.
type size struct {
	typ string
	len int64 // -1: unknown
	mem int64 // MEMORY USAGE; -1: refused or failed
}

// bytes is the value's size as far as known, -1 when it is not.
func (s size) bytes() int64 {
	if s.typ == "string" {
		return s.len
	}
	return s.mem
}

// measure reads the sizes of keys: TYPE and MEMORY USAGE in one
// pipeline, then the lengths.
func measure(ctx context.Context, c redis.Cmdable, keys []string) ([]size, error) {
	p := c.Pipeline()
	typs := make([]*redis.StatusCmd, len(keys))
	mems := make([]*redis.IntCmd, len(keys))
	for i, k := range keys {
		typs[i] = p.Type(ctx, k)
		mems[i] = p.MemoryUsage(ctx, k)
	}
	_, _ = p.Exec(ctx) // each reply is looked at below
	out := make([]size, len(keys))
	lens := make([]*redis.IntCmd, len(keys))
	p = c.Pipeline()
	for i, k := range keys {
		t, err := typs[i].Result()
		if err != nil {
			return nil, err
		}
		out[i] = size{typ: t, len: -1, mem: -1}
		if m, err := mems[i].Result(); err == nil || errors.Is(err, redis.Nil) {
			out[i].mem = m
		}
		lens[i] = redisview.LengthCmd(ctx, p, t, k)
	}
	if _, err := p.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		var re redis.Error
		if !errors.As(err, &re) {
			return nil, err
		}
	}
	for i, l := range lens {
		if l != nil && l.Err() == nil {
			out[i].len = l.Val()
		}
	}
	return out, nil
}

// large reports a value not to be read: above limit, or of a size not
// known.
func (s size) large(limit int64) bool {
	if s.typ == "none" {
		return false
	}
	b := s.bytes()
	return b < 0 || b > limit
}

// readStates reads the states of keys: their sizes first, then TYPE,
// PEXPIRETIME and the DUMP of those under the cap, in pipelines of at
// most pipeBytes of values.
func (e *Engine) readStates(ctx context.Context, c redis.Cmdable, keys []string) ([]State, error) {
	sizes, err := measure(ctx, c, keys)
	if err != nil {
		return nil, err
	}
	out := make([]State, 0, len(keys))
	for i := 0; i < len(keys); {
		p := c.Pipeline()
		var cmds []stateCmds
		var held int64
		for ; i < len(keys); i++ {
			s := sizes[i]
			big := s.large(e.o.MaxKeyBytes)
			if !big && len(cmds) > 0 && held+s.bytes() > e.pipeBytes() {
				break
			}
			if big {
				cmds = append(cmds, stateCmds{typ: p.Type(ctx, keys[i]), exp: p.Do(ctx, "PEXPIRETIME", keys[i])})
				continue
			}
			held += max(s.bytes(), 0)
			cmds = append(cmds, queueState(ctx, p, keys[i]))
		}
		if _, err := p.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
			return nil, err
		}
		states, err := collect(cmds)
		if err != nil {
			return nil, err
		}
		for _, st := range states {
			sz := sizes[len(out)]
			st.Memory, st.Len = sz.mem, sz.len
			st.Large = st.Exists() && sz.large(e.o.MaxKeyBytes)
			out = append(out, st)
		}
	}
	return out, nil
}

// pipeBytes bounds the values one pipeline of DUMPs carries.
func (e *Engine) pipeBytes() int64 { return 4 * e.o.MaxKeyBytes }
