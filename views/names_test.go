package views

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/a-h/templ"

	"github.com/keydeck/keydeck/internal/route"
)

func TestEscapeName(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain:key", "plain:key"},
		{"bad\xff", `bad\xff`},
		{"\xc3", `\xc3`}, // a cut-off two-byte sequence
		{`C:\temp`, `C:\\temp`},
		{"a\nb\r\tc", `a\nb\r\tc`},
		{"nul\x00del\x7f", `nul\x00del\x7f`},
		{"evil\u202etxt.exe", `evil\u202etxt.exe`},
		{"zero\u200bwidth", `zero\u200bwidth`},
		{"nb\u00a0sp", `nb\u00a0sp`},
		{"c1\u0085", `c1\u0085`},
		{"李雷 é ok", "李雷 é ok"},
		{"\ufffd", "\ufffd"},     // a real U+FFFD is not an escape
		{"<b>&</b>", "<b>&</b>"}, // markup is templ's job, not this one's
		// Past U+FFFF: eight digits, so no following character is read
		// as one of them.
		{"\U000f0000", `\U000f0000`},
		{"\U000e0001a", `\U000e0001a`},
	}
	for _, tt := range tests {
		if got := EscapeName(tt.in); got != tt.want {
			t.Errorf("EscapeName(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if !utf8.ValidString(EscapeName(tt.in)) {
			t.Errorf("EscapeName(%q) is not UTF-8", tt.in)
		}
	}
}

// Two names never show the same: U+F000 then "0" and U+F0000 both showed
// \uf0000 (five hex digits after \u for code points past U+FFFF), so
// which one a page meant could not be told — nor typed back.
func TestEscapeNameIsUnambiguous(t *testing.T) {
	pairs := [][2]string{
		{"\uf000" + "0", "\U000f0000"},
		{"\ufff9" + "a", "\U000fff9a"},
		{"\\" + "x41", "\x41"},
	}
	for _, p := range pairs {
		if EscapeName(p[0]) == EscapeName(p[1]) {
			t.Errorf("%q and %q both show as %q", p[0], p[1], EscapeName(p[0]))
		}
	}
}

// What a page shows, typed back with the escaped encoding, is the name's
// bytes exactly (route.UnescapeName is EscapeName's inverse).
func FuzzEscapeRoundTrip(f *testing.F) {
	for _, s := range []string{"", "a\nb", "bad\xff", `C:\temp`, "evil\u202etxt", "\uf0000", "\U000f0000", "\x00\x7f", "李雷"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		back, err := route.UnescapeName(EscapeName(s))
		if err != nil || back != s {
			t.Fatalf("%q shows as %q, read back as %q (%v)", s, EscapeName(s), back, err)
		}
	})
}

func TestShortName(t *testing.T) {
	exact := strings.Repeat("a", nameShown)
	if s, cut := ShortName(exact); s != exact || cut {
		t.Errorf("a name of exactly %d characters is cut: %q %v", nameShown, s, cut)
	}
	if s, cut := ShortName(exact + "b"); s != exact || !cut {
		t.Errorf("one character too many: %q %v", s, cut)
	}
	// Characters, not bytes: 120 Chinese characters are 360 bytes.
	han := strings.Repeat("李", nameShown)
	if s, cut := ShortName(han); s != han || cut {
		t.Errorf("multi-byte name cut by bytes: %d bytes, %v", len(s), cut)
	}
	// An escape counts as one character and is never split.
	s, cut := ShortName(strings.Repeat("\xff", 1<<20))
	if !cut || s != strings.Repeat(`\xff`, nameShown) {
		t.Errorf("escaped name cut to %q", s[:min(len(s), 40)])
	}
}

func TestKeyField(t *testing.T) {
	for _, tt := range []struct{ key, name, value string }{
		{"mg:score:leaderboard:2048", "k", "mg:score:leaderboard:2048"},
		{"李雷", "k", "李雷"},
		{"bad\xff", "kq", "bad%FF"},
		{"two\r\nlines", "kq", "two%0D%0Alines"},
		{"nul\x00", "kq", "nul%00"},
	} {
		if n, v := keyFieldName(tt.key), keyFieldValue(tt.key); n != tt.name || v != tt.value {
			t.Errorf("key field of %q = %s=%q, want %s=%q", tt.key, n, v, tt.name, tt.value)
		}
	}
}

// A 1 MB name in every list of the database page costs a few hundred
// bytes per row: cut short, unlinked, its length noted.
func TestDatabaseFragmentCutsLongNames(t *testing.T) {
	huge := "huge:" + strings.Repeat("x", 1<<20)
	vm := DBPageVM{Conn: "c", Total: "1",
		Violations: []ViolationRow{{Key: huge, Family: "f", Problem: "no TTL"}},
		Unmatched:  []PrefixRow{{Prefix: huge, Keys: "1", Examples: []string{huge, huge, huge}}},
		ByMemory:   []BigKeyRow{{Key: huge, Family: "no family", Type: "string", Size: "1 MiB"}},
		ByElements: []BigKeyRow{{Key: huge, Family: "no family", Type: "string", Size: "1 bytes"}},
	}
	var buf bytes.Buffer
	if err := DBLive(vm, true).Render(context.Background(), &buf); err != nil {
		t.Fatal(err)
	}
	if buf.Len() > 16<<10 {
		t.Fatalf("fragment is %d bytes for six mentions of a 1 MB name", buf.Len())
	}
	d := render(t, DBLive(vm, true))
	if n := d.Find(`[data-testid="name-cut"]`).Length(); n != 7 {
		t.Errorf("%d names marked as cut, want 7", n)
	}
	if got := d.Find(`[data-testid="violation-key"]`).Text(); !strings.HasSuffix(got, "… (1,048,581 bytes)") || len(got) > 200 {
		t.Errorf("violation key shown as %.200q", got)
	}
	// The violation, the two biggest keys and the prefix (whose key list
	// a link would carry it to).
	if n := d.Find(`[data-testid="name-unlinked"]`).Length(); n != 4 {
		t.Errorf("%d names marked unlinked, want 4", n)
	}
	if d.Find(`a[data-testid="prefix-link"]`).Length() != 0 {
		t.Error("a prefix too long to link is still a link")
	}
	if d.Find(`a[data-testid="violation-key"], a[data-testid="big-key"]`).Length() != 0 {
		t.Error("a name without a link target is still a link")
	}
}

// Names that are not UTF-8 are shown escaped, so the fragment a browser
// receives is valid UTF-8; markup in them stays inert.
func TestFragmentsEscapeInvalidUTF8(t *testing.T) {
	lb := LeaderboardVM{Key: "mg:score:leaderboard:\xfe", Size: "2", CanRemove: true, MetaTitles: []string{"field\xff"}, Rows: []LeaderboardRow{
		{Rank: "1", Member: "bad\xff<b>", Score: "5", Meta: []MetaCell{{Text: "v\xfe"}}, RemoveHref: "/actions/preview?arg.member=bad%FF%3Cb%3E"},
		{Rank: "2", Member: strings.Repeat("m", 5000), Score: "4"},
	}}
	list := LeaderboardListVM{Groups: []LeaderboardGroup{{Conn: "c", Boards: []LeaderboardItem{{Key: "lb\xff", Href: "/x?k=lb%FF", Top: "top\xfe", Size: "1"}}}}}
	audit := AuditVM{Rows: []AuditRow{{ID: "1-0", User: "u\xff", Role: "admin", Keys: []string{"k\xff"}, Summary: "deleted k\xff", Error: "e\xff"}}}
	db := DBPageVM{Conn: "c", Err: "ERR \xff", Violations: []ViolationRow{{Key: "v\xff", Href: "/k?k=v%FF"}}, Unmatched: []PrefixRow{{Prefix: "p\xff", Examples: []string{"e\xff"}}}}
	ov := OverviewVM{Conn: "c", Connected: true, ReadErr: "r\xff", Server: []Tile{{Label: "version", Value: "7\xff"}}, Unavailable: []string{"u\xff"}}
	for name, c := range map[string]templ.Component{
		"leaderboard": LeaderboardLive(lb, true), "leaderboard page": LeaderboardPage(Page{}, lb), "list": LeaderboardListLive(list, true),
		"audit": AuditLive(audit, true), "db": DBLive(db, true), "overview": OverviewLive(ov, true),
	} {
		var buf bytes.Buffer
		if err := c.Render(context.Background(), &buf); err != nil {
			t.Fatal(err)
		}
		if !utf8.Valid(buf.Bytes()) {
			t.Errorf("%s: output is not UTF-8", name)
		}
	}
	d := render(t, LeaderboardLive(lb, true))
	if got := d.Find(`[data-testid="lb-member"]`).First().Text(); got != `bad\xff<b>` {
		t.Errorf("member shown as %q", got)
	}
	if d.Find(`[data-testid="lb-remove"]`).Length() != 1 || d.Find(`[data-testid="lb-remove-unlinked"]`).Length() != 1 {
		t.Error("want one remove link and one member too long to link")
	}
	if href, _ := d.Find(`[data-testid="lb-remove"]`).Attr("href"); href != "/actions/preview?arg.member=bad%FF%3Cb%3E" {
		t.Errorf("remove link %q is not the byte-exact one given", href)
	}
	if got := render(t, AuditLive(audit, true)).Find(`[data-testid="audit-user"]`).Text(); strings.Join(strings.Fields(got), " ") != `u\xff (admin)` {
		t.Errorf("audit user shown as %q", got)
	}
	p := render(t, LeaderboardPage(Page{}, lb))
	if got := p.Find(`[data-testid="lb-key"]`).Text(); got != `mg:score:leaderboard:\xfe` {
		t.Errorf("page title %q", got)
	}
	if p.Find(`[data-name-box] [data-copy-name]`).Length() != 1 {
		t.Error("the full name has no copy button")
	}
	if v, _ := p.Find(`input[name="kq"]`).First().Attr("value"); v != "mg%3Ascore%3Aleaderboard%3A%FE" {
		t.Errorf("lookup form carries the key as %q", v)
	}
}
