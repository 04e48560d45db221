package console

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/views/format"
)

// MaxReadBytes bounds what one read's keys may hold together: the
// element bounds (MaxElements) say nothing of an element's size (GET of a
// 200 MB string, HGETALL of ten 100 MB fields), nor of a command naming
// thousands of keys (SUNION s1 … s5000, MGET), whose sizes add up in one
// reply that Keydeck holds whole before it shows the first line.
const MaxReadBytes = 1 << 20

// Read runs a read Decide let through (d, for args) once (Run), after
// refusing it when its keys hold more than MaxReadBytes together.
func (o On) Read(ctx context.Context, d Decision, args []string) (Reply, error) {
	if err := checkBytes(ctx, o.cl, d.Cmd, d.Keys); err != nil {
		return Reply{}, err
	}
	return o.Run(ctx, args)
}

// readsValues: a command that returns (or uses) the data of its keys, as
// its key specs say (flag access; Redis < 7 has no key specs: assumed).
// STRLEN, HLEN, EXISTS … read no value, whatever the key's size, nor do
// the fast keyspace commands (TTL, PTTL, EXPIRETIME: flagged access for
// the key's metadata; DUMP is slow, and measured). The SCAN family is
// bounded by its COUNT, a page at a time: it is how a large key is read.
func readsValues(c *Command) bool {
	if c == nil || isScan(c) || (c.In("@keyspace") && c.In("@fast")) {
		return false
	}
	if len(c.KeySpecs) == 0 {
		return true
	}
	return slices.ContainsFunc(c.KeySpecs, func(ks KeySpec) bool { return slices.Contains(ks.Flags, "access") })
}

// checkBytes measures the keys (measureBytes) and refuses
// when they hold more than MaxReadBytes together, linking the largest
// key's page. A server that refuses MEMORY USAGE (ACL, a managed Redis)
// leaves those keys to the element bounds.
func checkBytes(ctx context.Context, cl redis.UniversalClient, c *Command, keys []string) error {
	if len(keys) == 0 || !readsValues(c) {
		return nil
	}
	types := make([]*redis.StatusCmd, len(keys))
	if _, err := cl.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, k := range keys {
			types[i] = p.Type(ctx, k)
		}
		return nil
	}); err != nil {
		if moved(err) {
			// On a cluster node that does not serve the key: the command
			// meets the same MOVED, and the page links the right node.
			return nil
		}
		return err
	}
	sizes, err := measureBytes(ctx, cl, keys, types)
	if err != nil {
		return err
	}
	var total, most int64
	largest := ""
	for i, s := range sizes {
		if s == nil || s.Err() != nil {
			continue
		}
		total += s.Val()
		if s.Val() > most {
			most, largest = s.Val(), keys[i]
		}
	}
	if total <= MaxReadBytes {
		return nil
	}
	up := strings.ToUpper(c.Name)
	if len(keys) == 1 {
		return forbidden(KeyPage, largest, "%s would read %s, which holds %s: above the console's %s for one command; the key's page reads it a page at a time",
			up, Quote(largest), format.Bytes(total), format.Bytes(MaxReadBytes))
	}
	return forbidden(KeyPage, largest, "%s would read %s from its %s keys together (the largest, %s, holds %s): above the console's %s for one command; the keys' pages read them a page at a time",
		up, format.Bytes(total), format.Count(int64(len(keys))), Quote(largest), format.Bytes(most), format.Bytes(MaxReadBytes))
}

// isRefusal: the server's refusal of a measuring command (NOPERM, an
// unknown command): that key is not measured.
func isRefusal(err error) bool {
	var re redis.Error
	return errors.As(err, &re)
}

// exactUpTo is the largest collection MEMORY USAGE walks whole (SAMPLES 0):
// the element bounds let no whole read of a larger one through, so a
// larger key is only read an element or a page at a time, and is sampled.
const exactUpTo = MaxElements

// measureBytes sizes each key: STRLEN for a string (O(1)); for a
// collection its length first, then MEMORY USAGE walking every element
// when it has at most exactUpTo (a sample of five cannot see one huge
// field among small ones), five otherwise. Three pipelines; a size the
// server refuses (ACL, a managed Redis) is left nil.
func measureBytes(ctx context.Context, cl redis.UniversalClient, keys []string, types []*redis.StatusCmd) ([]*redis.IntCmd, error) {
	lens := make([]*redis.IntCmd, len(keys))
	if _, err := cl.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, k := range keys {
			switch types[i].Val() {
			case "hash":
				lens[i] = p.HLen(ctx, k)
			case "set":
				lens[i] = p.SCard(ctx, k)
			case "zset":
				lens[i] = p.ZCard(ctx, k)
			case "list":
				lens[i] = p.LLen(ctx, k)
			case "stream":
				lens[i] = p.XLen(ctx, k)
			}
		}
		return nil
	}); err != nil && !isRefusal(err) && !errors.Is(err, redis.Nil) {
		return nil, err
	}
	sizes := make([]*redis.IntCmd, len(keys))
	_, err := cl.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, k := range keys {
			switch t := types[i].Val(); {
			case t == "none":
			case t == "string":
				sizes[i] = p.StrLen(ctx, k)
			case lens[i] != nil && lens[i].Err() == nil && lens[i].Val() <= exactUpTo:
				sizes[i] = p.MemoryUsage(ctx, k, 0)
			default:
				sizes[i] = p.MemoryUsage(ctx, k, 5)
			}
		}
		return nil
	})
	if err != nil && !isRefusal(err) && !errors.Is(err, redis.Nil) {
		return nil, err
	}
	return sizes, nil
}

// moved: a cluster node's redirection (MOVED, ASK) of a key it does not
// serve.
func moved(err error) bool {
	var re redis.Error
	if !errors.As(err, &re) {
		return false
	}
	m := re.Error()
	return strings.HasPrefix(m, "MOVED ") || strings.HasPrefix(m, "ASK ")
}
