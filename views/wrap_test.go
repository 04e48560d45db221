package views

import (
	"context"
	"strings"
	"testing"
)

func TestWrappedBreaksBetweenPartsOnly(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"user:ban:xiaoming", "user:<wbr>ban:<wbr>xiaoming"},
		{"a::b", "a::<wbr>b"},
		{"mg:score:leaderboard:2048", "mg:<wbr>score:<wbr>leaderboard:<wbr>2048"},
		{"q/rps_key-1.2", "q/<wbr>rps_<wbr>key-<wbr>1.<wbr>2"},
		{"trailing:", "trailing:"},
		{":lead", ":<wbr>lead"},
		{"xiaoming", "xiaoming"},
		{"", ""},
		{"<b>:x&y", "&lt;b&gt;:<wbr>x&amp;y"},
		{`\xff:é`, `\xff:<wbr>é`},
	} {
		var b strings.Builder
		if err := Wrapped(tc.in).Render(context.Background(), &b); err != nil {
			t.Fatal(err)
		}
		if b.String() != tc.want {
			t.Errorf("Wrapped(%q) = %q, want %q", tc.in, b.String(), tc.want)
		}
	}
}

// Name wraps between a name's parts as Wrapped does, escaping it and
// keeping every byte (spaces at either end included); a cut name still
// says its length.
func TestNameWraps(t *testing.T) {
	long := strings.Repeat("ab:", nameShown)
	for _, tc := range []struct{ in, want string }{
		{"user:ban:xiaoming", "user:<wbr>ban:<wbr>xiaoming"},
		{" a:b ", " a:<wbr>b "},
		{"<i>:x", "&lt;i&gt;:<wbr>x"},
		{"bad\xff:x", `bad\xff:<wbr>x`},
		{"plain", "plain"},
	} {
		var b strings.Builder
		if err := Name(tc.in).Render(context.Background(), &b); err != nil {
			t.Fatal(err)
		}
		if b.String() != tc.want {
			t.Errorf("Name(%q) = %q, want %q", tc.in, b.String(), tc.want)
		}
	}
	var b strings.Builder
	if err := Name(long).Render(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(b.String(), "ab:<wbr>ab:<wbr>") || !strings.Contains(b.String(), `data-testid="name-cut"`) {
		t.Errorf("Name(long) = %.200q…", b.String())
	}
}
