package console

import (
	"errors"
	"fmt"
	"math/big"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

func TestFormat(t *testing.T) {
	tests := []struct {
		name string
		v    any
		err  error
		want string
	}{
		{"integer", int64(1), nil, "(integer) 1\n"},
		{"nil", nil, redis.Nil, "(nil)\n"},
		{"error", nil, replyError("ERR unknown command 'FOO'"), "(error) ERR unknown command 'FOO'\n"},
		{"string", "hello world", nil, "\"hello world\"\n"},
		{"binary", "\xff\x00a\"\\\n", nil, `"\xff\x00a\"\\\n"` + "\n"},
		{"html", "<b>&", nil, "\"<b>&\"\n"},
		{"empty", []any{}, nil, "(empty array)\n"},
		{"array", []any{"a", int64(2), nil}, nil, "1) \"a\"\n2) (integer) 2\n3) (nil)\n"},
		{"nested", []any{"a", []any{"b", []any{"c"}}, "d"}, nil,
			"1) \"a\"\n2) 1) \"b\"\n   2) 1) \"c\"\n3) \"d\"\n"},
		{"nested empty", []any{[]any{}}, nil, "1) (empty array)\n"},
		{"error element", []any{"OK", replyError("WRONGTYPE Operation against a key")}, nil,
			"1) \"OK\"\n2) (error) WRONGTYPE Operation against a key\n"},
		{"double", 1.5, nil, "(double) 1.5\n"},
		{"bool", true, nil, "(true)\n"},
		{"big", big.NewInt(12345678901234), nil, "(big number) 12345678901234\n"},
		{"map", map[any]any{"b": int64(2), "a": []any{"x"}}, nil, "1# \"a\" => 1) \"x\"\n2# \"b\" => (integer) 2\n"},
	}
	for _, tt := range tests {
		got := Format(tt.v, tt.err)
		if got.Text != tt.want || got.Truncated != "" {
			t.Errorf("%s: %q (%q), want %q", tt.name, got.Text, got.Truncated, tt.want)
		}
	}
}

// Ten or more elements align their numbers as redis-cli does.
func TestFormatAligns(t *testing.T) {
	l := make([]any, 10)
	for i := range l {
		l[i] = []any{fmt.Sprint(i)}
	}
	got := Format(l, nil).Text
	if !strings.HasPrefix(got, " 1) 1) \"0\"\n") || !strings.Contains(got, "10) 1) \"9\"\n") {
		t.Errorf("%q", got)
	}
}

func TestFormatTruncates(t *testing.T) {
	l := make([]any, 1500)
	for i := range l {
		l[i] = fmt.Sprint(i)
	}
	r := Format(l, nil)
	if strings.Count(r.Text, "\n") != ReplyElements || !strings.Contains(r.Truncated, "1,500 elements") || !strings.Contains(r.Truncated, "first 1,000") {
		t.Errorf("%d lines, %q", strings.Count(r.Text, "\n"), r.Truncated)
	}
	long := strings.Repeat("x", ReplyString+10)
	r = Format(long, nil)
	if len(r.Text) != ReplyString+len(`""…`)+1 || !strings.Contains(r.Truncated, "65,546 bytes shows its first 65,536") {
		t.Errorf("%d bytes, %q", len(r.Text), r.Truncated)
	}
	if r := Format(nil, errors.New("dial tcp: refused")); r.Text != "(error) dial tcp: refused\n" {
		t.Errorf("%q", r.Text)
	}
}

// Line writes a command so that Split reads back every argument byte for
// byte: the history and the action's argument rely on it.
func TestLineRoundTrips(t *testing.T) {
	args := []string{"SET", "plain", "", " padded ", "a\"b'c", "\xff\xfe", "<script>alert(1)</script>", "é", "tab\there", `back\slash`, "{tag}:x"}
	got, err := Split(Line(args))
	if err != nil || strings.Join(got, "\x00") != strings.Join(args, "\x00") {
		t.Fatalf("Split(Line) = %q, %v; want %q (line %s)", got, err, args, Line(args))
	}
	if l := Line([]string{"GET", "a:b"}); l != "GET a:b" {
		t.Errorf("plain args unquoted: %s", l)
	}
}
