package value

import (
	"context"
	"strconv"

	"github.com/redis/go-redis/v9"
)

// runCommands does what the script does with plain commands, for servers
// that refuse scripts: the same reply, but elements arrive whole and are
// cut here.
func runCommands(ctx context.Context, c redis.UniversalClient, key string, w window) (reply, error) {
	run := &commands{ctx: ctx, c: c, key: key, w: w}
	var err error
	switch w.mode {
	case "hscan", "sscan":
		err = run.scan()
	case "lrange":
		err = run.lrange()
	case "zrank", "zscore":
		err = run.zrange()
	case "xrange", "xrev":
		err = run.xrange()
	default:
		err = badReply("unknown mode " + w.mode)
	}
	return run.r, err
}

// commands is one window read by plain commands, building the reply the
// script would have given.
type commands struct {
	ctx context.Context
	c   redis.UniversalClient
	key string
	w   window
	r   reply
}

func (run *commands) do(args ...any) *redis.Cmd { return run.c.Do(run.ctx, args...) }

func (run *commands) a(i int) any { return run.w.args[i] }

// put adds an element, cut as the script cuts it, with its full length.
func (run *commands) put(s string) {
	p := part(s)
	run.r.parts = append(run.r.parts, p.Bytes, int64(p.Len))
}

// scan is HSCAN or SSCAN: up to maxScans calls while a filter finds too
// little, so a filtered page is not empty for want of trying.
func (run *commands) scan() error {
	cmd, lencmd, per := "HSCAN", "HLEN", 2
	if run.w.mode == "sscan" {
		cmd, lencmd, per = "SSCAN", "SCARD", 1
	}
	n, err := run.do(lencmd, run.key).Int64()
	if err != nil {
		return err
	}
	cursor, match, scans, skip := run.a(0).(string), run.a(1).(string), run.a(2).(int), run.a(3).(int)
	got, resume := 0, ""
	for range scans {
		args := []any{cmd, run.key, cursor}
		if match != "" {
			args = append(args, "MATCH", match)
		}
		v, err := run.do(append(args, "COUNT", PageSize)...).Slice()
		if err != nil {
			return err
		}
		if len(v) != 2 {
			return badReply(cmd)
		}
		items, _ := v[1].([]any)
		// As in the script: at most PageSize kept, resuming inside a reply
		// that held more.
		for j := skip; j < len(items)/per; j++ {
			if got >= PageSize {
				resume = cursor + ":" + strconv.Itoa(j)
				break
			}
			for _, s := range items[j*per : (j+1)*per] {
				run.put(str(s))
			}
			got++
		}
		skip = 0
		if resume != "" {
			cursor = resume
			break
		}
		cursor, _ = v[0].(string)
		if cursor == "0" || match == "" || got >= PageSize/2 {
			break
		}
	}
	run.r.head = []any{n, cursor}
	return nil
}

func (run *commands) lrange() error {
	n, err := run.do("LLEN", run.key).Int64()
	if err != nil {
		return err
	}
	items, err := run.do("LRANGE", run.key, run.a(0), run.a(1)).StringSlice()
	if err != nil {
		return err
	}
	for _, s := range items {
		run.put(s)
	}
	run.r.head = []any{n}
	return nil
}

// zrange is a window by rank, or by score: then the rank of the first
// member in range and the count in range lead the reply.
func (run *commands) zrange() error {
	key := run.key
	n, err := run.do("ZCARD", key).Int64()
	if err != nil {
		return err
	}
	run.r.head = []any{n}
	start, stop := run.a(0), run.a(1)
	if run.w.mode == "zscore" {
		off := run.a(2).(int64)
		in, err := run.do("ZCOUNT", key, run.a(0), run.a(1)).Int64()
		if err != nil {
			return err
		}
		run.r.head = append(run.r.head, in, int64(-1))
		if in == 0 {
			return nil
		}
		first, err := run.do("ZRANGEBYSCORE", key, run.a(0), run.a(1), "LIMIT", 0, 1).StringSlice()
		if err != nil || len(first) == 0 {
			return err // changed meanwhile: an empty window
		}
		r0, err := run.do("ZRANK", key, first[0]).Int64()
		if err != nil {
			return err
		}
		run.r.head[2] = r0
		if off >= in {
			return nil
		}
		start, stop = r0+off, r0+min(off+PageSize, in)-1
	}
	zs, err := run.c.ZRangeWithScores(run.ctx, key, start.(int64), stop.(int64)).Result()
	if err != nil {
		return err
	}
	for _, z := range zs {
		run.put(str(z.Member))
		run.r.parts = append(run.r.parts, strconv.FormatFloat(z.Score, 'g', -1, 64))
	}
	return nil
}

// xrange is a page of entries forwards or backwards from an ID, with
// whether more follow and where the page before starts.
func (run *commands) xrange() error {
	key := run.key
	n, err := run.do("XLEN", key).Int64()
	if err != nil {
		return err
	}
	at, pairs := run.a(0).(string), run.a(1).(int)
	cmd, end, back, bend := "XRANGE", "+", "XREVRANGE", "-"
	if run.w.mode == "xrev" {
		cmd, end, back, bend = "XREVRANGE", "-", "XRANGE", "+"
	}
	es, err := run.do(cmd, key, at, end, "COUNT", PageSize+1).Slice()
	if err != nil {
		return err
	}
	more := int64(0)
	if len(es) > PageSize {
		more, es = 1, es[:PageSize]
	}
	prev := ""
	if len(es) > 0 && at != "-" && at != "+" {
		ps, err := run.do(back, key, "("+entryID(es[0]), bend, "COUNT", PageSize).Slice()
		if err != nil {
			return err
		}
		if len(ps) > 0 {
			prev = entryID(ps[len(ps)-1])
		}
	}
	run.r.head = []any{n, more, prev}
	for _, e := range es {
		ev, _ := e.([]any)
		var fs []any
		if len(ev) == 2 {
			fs, _ = ev[1].([]any)
		}
		keep := min(len(fs), 2*pairs)
		run.r.parts = append(run.r.parts, entryID(e), int64(keep), int64(len(fs)))
		for _, f := range fs[:keep] {
			run.put(str(f))
		}
	}
	return nil
}
