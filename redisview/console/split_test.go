package console

import (
	"errors"
	"reflect"
	"testing"
)

func TestSplit(t *testing.T) {
	tests := []struct {
		line string
		want []string
	}{
		{"", nil},
		{"   \t ", nil},
		{"GET key", []string{"GET", "key"}},
		{"  SET  a   b  ", []string{"SET", "a", "b"}},
		{`SET "a b" 'c d'`, []string{"SET", "a b", "c d"}},
		// Spaces inside quotes are kept: names are bytes, never trimmed.
		{`GET "  padded  "`, []string{"GET", "  padded  "}},
		{`GET ""`, []string{"GET", ""}},
		{`GET ''`, []string{"GET", ""}},
		// Double quotes: hex and C escapes; any other escaped byte is itself.
		{`SET "\xff\x00\x41" v`, []string{"SET", "\xff\x00A", "v"}},
		{`SET "a\nb\r\t\b\a" v`, []string{"SET", "a\nb\r\t\b\a", "v"}},
		{`SET "q\"uote\\" v`, []string{"SET", `q"uote\`, "v"}},
		{`SET "\xZZ" v`, []string{"SET", "xZZ", "v"}},
		// Single quotes: only \' is an escape.
		{`SET 'it\'s' '\x41\n'`, []string{"SET", "it's", `\x41\n`}},
		// Unquoted: a backslash is a byte like any other.
		{`GET a\x41`, []string{"GET", `a\x41`}},
		// Quotes may start mid-argument.
		{`GET ab"c d"`, []string{"GET", "abc d"}},
		// HTML and invalid UTF-8 pass through.
		{"GET <b>\xfe", []string{"GET", "<b>\xfe"}},
		{"GET a\nSET b c", []string{"GET", "a", "SET", "b", "c"}},
	}
	for _, tt := range tests {
		got, err := Split(tt.line)
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Split(%q) = %q, %v; want %q", tt.line, got, err, tt.want)
		}
	}
}

func TestSplitRefusesUnbalancedQuotes(t *testing.T) {
	for _, line := range []string{`GET "a`, `GET 'a`, `GET "a"b`, `GET 'a'b`, `GET "a\"`, `GET "\`} {
		if got, err := Split(line); !errors.Is(err, ErrQuote) {
			t.Errorf("Split(%q) = %q, %v; want ErrQuote", line, got, err)
		}
	}
}

// Quote is Split's inverse: every argument, any bytes, round-trips.
func TestQuoteRoundTrips(t *testing.T) {
	args := []string{"", " ", "  padded  ", "a b", `"`, `'`, `\`, "\xff\x00", "é", "<script>", "a\nb", "\x7f\x1b[0m", "plain"}
	for _, a := range args {
		line := "GET " + Quote(a)
		got, err := Split(line)
		if err != nil || len(got) != 2 || got[1] != a {
			t.Errorf("Split(%s) = %q, %v; want [GET %q]", line, got, err, a)
		}
	}
}

func FuzzSplitQuote(f *testing.F) {
	f.Add("a b")
	f.Add("\xff\"'\\")
	f.Fuzz(func(t *testing.T, a string) {
		got, err := Split(Quote(a))
		if err != nil || len(got) != 1 || got[0] != a {
			t.Fatalf("Split(Quote(%q)) = %q, %v", a, got, err)
		}
	})
}
