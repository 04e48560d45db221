package console

import (
	"context"
	"errors"
	"strings"

	"github.com/redis/go-redis/v9"
)

// Keys are the key arguments of args, as the server names them: COMMAND
// GETKEYS, which follows movable keys (ZUNION's numkeys, XREAD's STREAMS,
// MIGRATE's KEYS). Where the server does not answer it (refused by an ACL,
// or Redis < 2.8.13), the table's key positions, but only for a command
// whose keys sit at fixed positions: for any other, a *Refused (the
// console fails closed rather than miss a sensitive key). A command with
// no key arguments has none. A reply that is the server's refusal of the
// arguments themselves (wrong number of arguments) is returned as a
// redis.Error, to be shown as the server's answer.
func Keys(ctx context.Context, cl redis.UniversalClient, c *Command, args []string) ([]string, error) {
	if len(args) < 2 {
		return nil, nil // the name alone: nothing can be a key
	}
	cmd := append([]any{"COMMAND", "GETKEYS"}, toAny(args)...)
	raw, err := cl.Do(ctx, cmd...).Result()
	if err == nil {
		return strs(raw), nil
	}
	var re redis.Error
	if !errors.As(err, &re) {
		return nil, err
	}
	msg := strings.ToLower(err.Error())
	switch {
	case strings.Contains(msg, "no key arguments"):
		return nil, nil
	case strings.Contains(msg, "number of arguments"), strings.Contains(msg, "invalid arguments"):
		return nil, re
	}
	if !fixedKeys(c) {
		return nil, forbidden(NoPage, "", "the server did not answer COMMAND GETKEYS (%v), and the keys of %s follow its arguments: without the server naming them the console cannot check them, so it does not run it. Give Keydeck's Redis user COMMAND GETKEYS (+command|getkeys)",
			err, strings.ToUpper(strings.ReplaceAll(c.Name, "|", " ")))
	}
	return positionalKeys(c, args), nil
}

// fixedKeys: every key of c is at a position the table gives (key specs
// of type index/range, or the legacy first/last/step): positionalKeys
// finds them all without the server.
func fixedKeys(c *Command) bool {
	if c.Has("movablekeys") {
		return false
	}
	for _, ks := range c.KeySpecs {
		if ks.Search != "index" || ks.Find != "range" {
			return false
		}
	}
	return true
}

// positionalKeys reads keys at the table's fixed positions: key specs of
// type index/range where there are any (Redis 7), else first/last/step.
func positionalKeys(c *Command, args []string) []string {
	type span struct{ first, last, step int }
	var spans []span
	for _, ks := range c.KeySpecs {
		if ks.Search == "index" && ks.Find == "range" {
			step := max(ks.KeyStep, 1)
			last := ks.LastKey
			if last >= 0 {
				last += ks.Index
			}
			spans = append(spans, span{ks.Index, last, step})
		}
	}
	if len(c.KeySpecs) == 0 && c.First > 0 {
		spans = append(spans, span{c.First, c.Last, max(c.Step, 1)})
	}
	var out []string
	for _, s := range spans {
		last := s.last
		if last < 0 {
			last = len(args) + last
		}
		for i := s.first; i <= last && i < len(args); i += s.step {
			out = append(out, args[i])
		}
	}
	return out
}

func toAny(args []string) []any {
	out := make([]any, len(args))
	for i, a := range args {
		out[i] = a
	}
	return out
}
