package console

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/views/format"
)

// Bounds of a shown reply.
const (
	ReplyElements = 1000     // array, map and set elements, all levels together
	ReplyString   = 64 << 10 // bytes of one string shown
	ReplyText     = 256 << 10
)

// Reply is a reply as redis-cli shows it.
type Reply struct {
	Text string
	// Truncated says what was cut ("" when nothing): the reply's full size.
	Truncated string
	// Shape is the reply's type and size without its text (shape), for
	// the audit record of a dangerous command.
	Shape string
}

// Format writes a reply (v, err: what go-redis's Do answered) the way
// redis-cli does: (integer) 1, (nil), "quoted" strings (Quote: \xHH for
// bytes that are not printable), (error) ERR …, arrays numbered and
// indented by nesting, and RESP3's maps (k => v), doubles and booleans.
//
// A status reply ("OK", "PONG") shows quoted, like a bulk string: go-redis
// gives both as a string and cannot tell them apart, and showing "OK"
// unquoted would show a string value "OK" as a status. RESP3 sets come as
// arrays, and maps in Go's map, whose order is lost: a map shows sorted by
// its formatted keys.
func Format(v any, err error) Reply {
	f := &formatter{}
	switch {
	case errors.Is(err, redis.Nil):
		f.b.WriteString("(nil)\n")
	case err != nil:
		f.b.WriteString("(error) " + err.Error() + "\n")
	default:
		if l, ok := v.([]any); ok && len(l) == 0 {
			f.b.WriteString("(empty array)\n")
		} else {
			f.value(v, "")
		}
	}
	r := Reply{Text: f.b.String(), Shape: shape(v, err)}
	if f.cut {
		n := count(v)
		r.Truncated = fmt.Sprintf("the reply holds %s elements; the first %s shown", format.Count(int64(n)), format.Count(int64(f.n)))
		if n <= ReplyElements {
			r.Truncated = fmt.Sprintf("the reply is longer than the %s shown", format.Bytes(ReplyText))
		}
	}
	if f.cutString != "" {
		r.Truncated = strings.TrimPrefix(r.Truncated+"; "+f.cutString, "; ")
	}
	return r
}

type formatter struct {
	b         strings.Builder
	n         int  // elements written
	cut       bool // elements or text cut
	cutString string
}

func (f *formatter) full() bool {
	if f.n >= ReplyElements || f.b.Len() >= ReplyText {
		f.cut = true
	}
	return f.cut
}

// value writes v; its first line follows what the caller wrote, the next
// ones start with indent.
func (f *formatter) value(v any, indent string) {
	switch x := v.(type) {
	case nil:
		f.b.WriteString("(nil)\n")
	case string:
		f.str(x)
	case int64:
		f.b.WriteString("(integer) " + strconv.FormatInt(x, 10) + "\n")
	case float64:
		f.b.WriteString("(double) " + strconv.FormatFloat(x, 'g', 17, 64) + "\n")
	case bool:
		f.b.WriteString(map[bool]string{true: "(true)\n", false: "(false)\n"}[x])
	case *big.Int:
		f.b.WriteString("(big number) " + x.String() + "\n")
	case redis.Error:
		f.b.WriteString("(error) " + x.Error() + "\n")
	case []any:
		f.array(x, indent)
	case map[any]any:
		f.mapping(x, indent)
	default:
		f.b.WriteString(fmt.Sprintf("(%T) %v\n", x, x))
	}
}

func (f *formatter) str(s string) {
	if len(s) > ReplyString {
		f.cutString = fmt.Sprintf("a string of %s bytes shows its first %s", format.Count(int64(len(s))), format.Count(ReplyString))
		f.b.WriteString(Quote(s[:ReplyString]) + "…\n")
		return
	}
	f.b.WriteString(Quote(s) + "\n")
}

func (f *formatter) array(l []any, indent string) {
	if len(l) == 0 {
		f.b.WriteString("(empty array)\n")
		return
	}
	w := len(strconv.Itoa(len(l)))
	for i, e := range l {
		if f.full() {
			return
		}
		if i > 0 {
			f.b.WriteString(indent)
		}
		prefix := fmt.Sprintf("%*d) ", w, i+1)
		f.b.WriteString(prefix)
		f.n++
		f.value(e, indent+strings.Repeat(" ", len(prefix)))
	}
}

func (f *formatter) mapping(m map[any]any, indent string) {
	if len(m) == 0 {
		f.b.WriteString("(empty map)\n")
		return
	}
	type kv struct {
		k string
		v any
	}
	var rows []kv
	for k, v := range m {
		sub := &formatter{}
		sub.value(k, "")
		rows = append(rows, kv{strings.TrimSuffix(sub.b.String(), "\n"), v})
	}
	slices.SortFunc(rows, func(a, b kv) int { return strings.Compare(a.k, b.k) })
	w := len(strconv.Itoa(len(rows)))
	for i, r := range rows {
		if f.full() {
			return
		}
		if i > 0 {
			f.b.WriteString(indent)
		}
		prefix := fmt.Sprintf("%*d# %s => ", w, i+1, r.k)
		f.b.WriteString(prefix)
		f.n++
		f.value(r.v, indent+strings.Repeat(" ", len(fmt.Sprintf("%*d# ", w, i+1))))
	}
}

// count is the number of elements in v, all levels together.
func count(v any) int {
	switch x := v.(type) {
	case []any:
		n := len(x)
		for _, e := range x {
			n += count(e)
		}
		return n
	case map[any]any:
		n := len(x)
		for _, e := range x {
			n += count(e)
		}
		return n
	}
	return 0
}

// Run runs a line Decide judged a read on cl and formats its reply. An
// error that is not the server's reply (the server unreachable, the
// deadline passed) is returned instead.
func Run(ctx context.Context, cl redis.UniversalClient, args []string) (Reply, error) {
	v, err := cl.Do(ctx, toAny(args)...).Result()
	var re redis.Error
	if err != nil && !errors.As(err, &re) && !errors.Is(err, redis.Nil) {
		return Reply{}, err
	}
	return Format(v, err), nil
}

// IsReply reports an error that is the server's reply (an error reply),
// to be shown as redis-cli shows it, not a failure to reach the server.
func IsReply(err error) bool {
	var re redis.Error
	return errors.As(err, &re)
}
