package decode

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/schema"
)

// maxPhases bounds the round trips of one ReadMany: the deepest reader
// (a concurrency set linking its members to their reservations) takes two.
const maxPhases = 3

// Item is one key to read by the role of its family.
type Item struct {
	Match schema.Match
	Key   string
}

// Decoded is one key read by its family's role: Err is a Redis error.
type Decoded struct {
	Result Result
	Err    error
}

// batch is what the keys of one ReadMany share.
type batch struct {
	sets map[int]*foundSets // concurrency sets per database, found once
}

type foundSets struct {
	sets     []string
	complete bool
	err      error
}

// ReadMany reads every item by its family's role at now, in env, all keys
// in one pipeline: one round trip for every reader, a second for those
// that need one (sent together). A sensitive family is never read; a role
// without a reader gives a zero Result (Role set).
func ReadMany(ctx context.Context, c redis.Cmdable, env Env, items []Item, now time.Time) []Decoded {
	out := make([]Decoded, len(items))
	b := &batch{}
	type job struct {
		i    int
		in   *Input
		next step
		fin  finish
	}
	var jobs []*job
	for i, it := range items {
		f := it.Match.Family
		if f == nil {
			continue
		}
		out[i].Result.Role = f.Role
		if f.Sensitive {
			out[i].Result.Sensitive, out[i].Result.Note = true, "sensitive: not decoded"
			continue
		}
		if r, ok := registry[f.Role]; ok {
			in := &Input{Key: it.Key, Match: it.Match, Env: env, Now: now, c: c, batch: b}
			jobs = append(jobs, &job{i: i, in: in, next: r.read})
		}
	}
	for phase := 0; len(jobs) > 0 && phase < maxPhases; phase++ {
		pipe := c.Pipeline()
		for _, j := range jobs {
			j.fin = j.next(ctx, pipe, j.in)
		}
		if pipe.Len() > 0 {
			_, _ = pipe.Exec(ctx) // each command carries its own reply or error
		}
		var again []*job
		for _, j := range jobs {
			state, next, err := j.fin()
			if err == nil && next != nil {
				j.next = next
				again = append(again, j)
				continue
			}
			out[j.i].Result, out[j.i].Err = result(out[j.i].Result, state, err)
		}
		jobs = again
	}
	for _, j := range jobs { // a reader wanting more phases than maxPhases
		out[j.i].Err = errors.New("decode: " + string(j.in.Match.Family.Role) + " needs more round trips than allowed")
	}
	return out
}

// result is res with a reader's state, or the note of a value that does
// not have the role's shape; err is returned for a Redis error.
func result(res Result, state any, err error) (Result, error) {
	if errors.Is(err, ErrNotDecodable) {
		res.Note = strings.TrimPrefix(err.Error(), ErrNotDecodable.Error()+": ")
		return res, nil
	}
	if err != nil {
		return res, err
	}
	res.State = state
	return res, nil
}

// concurrencySets finds the concurrency sets of db once per batch: every
// reservation read with it looks in the same sets.
func (in *Input) concurrencySets(ctx context.Context) ([]string, bool, error) {
	if in.batch.sets == nil {
		in.batch.sets = map[int]*foundSets{}
	}
	fs, ok := in.batch.sets[in.Env.DB]
	if !ok {
		fs = &foundSets{}
		fs.sets, fs.complete, fs.err = FindConcurrencySets(ctx, in.c, in.Env.Pack, in.Env.DB)
		in.batch.sets[in.Env.DB] = fs
	}
	return fs.sets, fs.complete, fs.err
}

// ReadKey reads one key of database db of conn by its family's role (m),
// at now: a page holds a connection, never a Redis client.
func ReadKey(ctx context.Context, conn *redisview.Conn, db int, m schema.Match, key string, now time.Time) (Result, error) {
	return DecodeIn(ctx, conn.DB(db), Env{Pack: conn.Pack(), DB: db}, m, key, now)
}
