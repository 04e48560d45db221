package action

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/redisview/schema"
)

// CreateKey creates a key of any type with its first value and, if asked,
// a TTL. It refuses a key that exists (edit or rename it instead); undo
// deletes the key it created.
//
// The value is the string itself (text or hex), or for an aggregate a JSON
// value that carries any text byte-exact: a hash an object of strings, a
// list or a set an array of strings, a sorted set an object of member →
// score, a stream one entry's fields as an object (id *).
type CreateKey struct{}

func init() { Register(CreateKey{}) }

// CreateTypes are the types a key may be created as, in the order a form
// offers them.
var CreateTypes = []string{"string", "hash", "list", "set", "zset", "stream"}

func (CreateKey) Name() string    { return KindCreateKey }
func (CreateKey) Title() string   { return "Create key" }
func (CreateKey) Requires() Level { return Admin }

// AppliesTo is false: a key is created from its database's page, not from
// a key's.
func (CreateKey) AppliesTo(*schema.Family) bool { return false }

func (CreateKey) Args() []Arg {
	return []Arg{
		{Name: ArgType, Help: "its type", Input: InputSelect, Choices: CreateTypes},
		{Name: ArgValue, Help: `its value: a string as is; a hash {"field": "value"}; a list or set ["a", "b"]; a sorted set {"member": 12.5}; a stream one entry {"field": "value"}; in JSON, any string may be {"b64": "…"} for bytes that are not text, and a hash, sorted set or stream may be an array of pairs [["field", "value"]]`, Data: true, Input: InputTextarea},
		{Name: ArgEncoding, Help: "a string's value is text, or hex digits (binary)", Input: InputSelect, Choices: []string{EncodingText, EncodingHex}, Optional: true},
		{Name: ArgTTL, Help: `its TTL: a duration from 1s to 365d (90s, 10m, 7d), or empty for none`, Optional: true},
	}
}

// content is a new key's value, by type.
type content struct {
	typ   string
	str   string
	pairs [][2]string // hash, stream
	elems []string    // list, set
	zs    []redis.Z
}

func (k CreateKey) Plan(ctx context.Context, env Env, req Request) (Plan, error) {
	if err := checkArgs(req, ArgType, ArgValue, ArgEncoding, ArgTTL); err != nil {
		return nil, err
	}
	if req.Key == "" {
		return nil, invalidf("the new key's name is required")
	}
	typ := req.Args[ArgType]
	if !slices.Contains(CreateTypes, typ) {
		return nil, invalidf("type %q: want one of %s", typ, strings.Join(CreateTypes, ", "))
	}
	var ttl time.Duration
	if raw := req.Args[ArgTTL]; raw != "" {
		d, persist, err := parseTTL(raw)
		if err != nil {
			return nil, err
		}
		if !persist {
			ttl = d
		}
	}
	c, err := parseContent(typ, req)
	if err != nil {
		return nil, err
	}
	if typ == "stream" {
		if err := streamRecordable(ctx, env, req); err != nil {
			return nil, err
		}
	}
	f := familyOf(env, req.DB, req.Key)
	if err := checkTypeShape(f, typ); err != nil {
		return nil, err
	}
	switch typ {
	case "string":
		err = checkStringShape(env, f, c.str)
	case "hash":
		err = checkHashShape(f, c.pairs)
	}
	if err != nil {
		return nil, err
	}
	return createPlan{key: req.Key, c: c, ttl: ttl}, nil
}

func parseContent(typ string, req Request) (content, error) {
	c := content{typ: typ}
	if typ == "string" {
		v, err := decodeValue(req, true)
		c.str = v
		return c, err
	}
	if enc := req.Args[ArgEncoding]; enc != "" && enc != EncodingText {
		return c, invalidf("a %s's value is JSON text; hex is for strings", typ)
	}
	raw := req.Args[ArgValue]
	what := "a " + typ + "'s value"
	var err error
	switch typ {
	case "hash", "stream":
		c.pairs, err = parsePairs(raw, what, false)
	case "list", "set":
		if c.elems, err = parseStrings(raw, what); err != nil || typ == "list" {
			return c, err
		}
		seen := map[string]bool{}
		for i, e := range c.elems {
			if seen[e] {
				return c, invalidf("member %d is given twice", i+1)
			}
			seen[e] = true
		}
	case "zset":
		var pairs [][2]string
		if pairs, err = parsePairs(raw, what, true); err != nil {
			return c, err
		}
		for i, p := range pairs {
			f, ok := parseScore(p[1])
			if !ok {
				return c, invalidf("the score of member %d is not a number", i+1)
			}
			c.zs = append(c.zs, redis.Z{Member: p[0], Score: f})
		}
	}
	return c, err
}

type createPlan struct {
	key string
	c   content
	ttl time.Duration
}

func (p createPlan) Keys() []string { return []string{p.key} }

// Notes warn that a stream is read back by DUMP only (it has no
// element-wise reading): where DUMP is refused or not Redis's format (the
// embedded demo), the undo will refuse, not knowing the state it left.
func (p createPlan) Notes() []string {
	if p.c.typ != "stream" {
		return nil
	}
	return []string{"A stream is recorded by DUMP only: where DUMP answers in another format than Redis's (the embedded demo), creating it cannot be undone (where DUMP is refused, it is not created at all)."}
}

// captureHint reads the new key back element-wise: it was absent, so
// nothing says whether this server allows DUMP, and a DUMP refused inside
// the transaction would abort the creation (a stream has no such reading,
// and is read back by DUMP).
func (p createPlan) captureHint(int) (string, string) {
	if snapshotType(p.c.typ) {
		return captureSnapshot, p.c.typ
	}
	return "", ""
}

func (p createPlan) size() (int64, string) {
	switch p.c.typ {
	case "string":
		return int64(len(p.c.str)), "bytes"
	case "hash":
		return int64(len(p.c.pairs)), "fields"
	case "list":
		return int64(len(p.c.elems)), "items"
	case "set":
		return int64(len(p.c.elems)), "members"
	case "zset":
		return int64(len(p.c.zs)), "members"
	}
	return 1, "entries"
}

func (p createPlan) Describe(states []State) ([]Change, error) {
	s := states[0]
	if s.Exists() {
		return nil, invalidf("key %s exists (%s); edit or rename it instead", quoteKey(s.Key), s.Shape())
	}
	after := State{Key: s.Key, Type: p.c.typ, PTTL: -1, Unit: ""}
	after.Size, after.Unit = p.size()
	if p.ttl > 0 {
		after.PTTL = p.ttl.Milliseconds()
	}
	return []Change{{
		Key: s.Key, Op: "create", After: after.Shape(), Before: s,
		Text: fmt.Sprintf("CREATE %s as %s: %s", quoteKey(s.Key), after.Shape(), p.words(s)),
	}}, nil
}

// words shows the start of the value, or its size on a sensitive key.
func (p createPlan) words(s State) string {
	switch p.c.typ {
	case "string":
		return valueWords(s, p.c.str)
	case "hash", "stream":
		return pairsWords(s, p.c.pairs)
	}
	n, unit := p.size()
	if s.Sensitive {
		return fmt.Sprintf("%d %s (sensitive, not shown)", n, unit)
	}
	var shown []string
	for i := range min(int(n), 3) {
		if p.c.typ == "zset" {
			z := p.c.zs[i]
			shown = append(shown, fmt.Sprintf("%q (%s)", clipText(z.Member.(string), 40), formatScore(z.Score)))
		} else {
			shown = append(shown, fmt.Sprintf("%q", clipText(p.c.elems[i], 40)))
		}
	}
	if int(n) > len(shown) {
		shown = append(shown, "…")
	}
	return strings.Join(shown, ", ")
}

func (p createPlan) Apply(ctx context.Context, tx redis.Pipeliner, _ []State) {
	switch p.c.typ {
	case "string":
		tx.Set(ctx, p.key, p.c.str, p.ttl)
		return
	case "hash":
		vals := make([]any, 0, 2*len(p.c.pairs))
		for _, kv := range p.c.pairs {
			vals = append(vals, kv[0], kv[1])
		}
		tx.HSet(ctx, p.key, vals...)
	case "list":
		tx.RPush(ctx, p.key, anys(p.c.elems)...)
	case "set":
		tx.SAdd(ctx, p.key, anys(p.c.elems)...)
	case "zset":
		tx.ZAdd(ctx, p.key, p.c.zs...)
	case "stream":
		streamPlan{key: p.key, id: "*", pairs: p.c.pairs}.Apply(ctx, tx, nil)
	}
	if p.ttl > 0 {
		tx.PExpire(ctx, p.key, p.ttl)
	}
}

func anys(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}
