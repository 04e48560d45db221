package handlers

import (
	"net/url"
	"testing"
)

// pageOf shows the page the topic stands on for its family, the first
// page for every other, and the last page for an offset past the rows.
func TestPageOf(t *testing.T) {
	t.Parallel()
	rows := make([]int, 23)
	for i := range rows {
		rows[i] = i
	}
	t0 := OpsTopic{Kind: locksKind, Conn: "main", Filter: "a&b", Fam: "f", DB: 3}
	for _, c := range []struct {
		name       string
		fam        string
		off, n     int
		first, got int
		prev, next string // wanted offsets; "" no link
	}{
		{"first page", "f", 0, 23, 0, 10, "", "10"},
		{"second", "f", 10, 23, 10, 10, "0", "20"},
		{"last, short", "f", 20, 23, 20, 3, "10", ""},
		{"past the rows", "f", 90, 23, 20, 3, "10", ""},
		{"unaligned", "f", 5, 23, 5, 10, "0", "15"},
		{"another family", "g", 10, 23, 0, 10, "", "10"},
		{"one page", "f", 10, 7, 0, 7, "", ""},
	} {
		tp := t0
		tp.Off = c.off
		got, p := pageOf(tp, c.fam, 3, rows[:c.n])
		if len(got) != c.got || (len(got) > 0 && got[0] != c.first) {
			t.Errorf("%s: rows %v", c.name, got)
		}
		for _, l := range []struct{ link, want string }{{p.Prev, c.prev}, {p.Next, c.next}} {
			if l.want == "" {
				if l.link != "" {
					t.Errorf("%s: unwanted link %q", c.name, l.link)
				}
				continue
			}
			u, err := url.Parse(l.link)
			if err != nil || u.Query().Get("q") != "a&b" || (l.want != "0" && (u.Query().Get("off") != l.want || u.Query().Get("fam") != c.fam)) ||
				(l.want == "0" && u.Query().Has("off")) {
				t.Errorf("%s: link %q, want offset %s", c.name, l.link, l.want)
			}
		}
		if (c.n > pageRows) != (p.Text != "") {
			t.Errorf("%s: pager text %q", c.name, p.Text)
		}
	}
}
