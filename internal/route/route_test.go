package route_test

import (
	"errors"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/keydeck/keydeck/internal/route"
)

func TestParseDB(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want int
		ok   bool
	}{{"0", 0, true}, {"15", 15, true}, {"255", 255, true}, {"256", 0, false}, {"-1", 0, false}, {"007", 0, false}, {"x", 0, false}, {"", 0, false}, {"+1", 0, false}} {
		got, err := route.ParseDB(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("ParseDB(%q) = %d, %v", tt.in, got, err)
		}
		if err != nil && !errors.Is(err, route.ErrParam) {
			t.Errorf("ParseDB(%q): %v is not ErrParam", tt.in, err)
		}
		if _, err := route.PathDB(tt.in); err != nil && !errors.Is(err, route.ErrNoPage) {
			t.Errorf("PathDB(%q): %v is not ErrNoPage", tt.in, err)
		}
	}
}

// Every builder's URL parses back, byte-exact, to what it was built from.
func TestURLsRoundTrip(t *testing.T) {
	const key = "conf:\xff:a b&c=d/é"
	if got := route.KeyURL("main", 3, key); got != "/c/main/db/3/key?k=conf%3A%FF%3Aa+b%26c%3Dd%2F%C3%A9" {
		t.Errorf("KeyURL = %q", got)
	}
	q := query(t, route.KeyURL("main", 3, key))
	if k, err := route.ParseKey(q); err != nil || k != key {
		t.Errorf("ParseKey = %q, %v", k, err)
	}

	w := route.Window{Conn: "main", DB: 14, Key: key, Start: 100, N: 25}
	if got, err := route.ParseWindow("main", 14, query(t, w.URL())); err != nil || got != w {
		t.Errorf("window %+v → %q → %+v, %v", w, w.URL(), got, err)
	}
	if got, err := route.ParseWindow("main", 14, w.Values()); err != nil || got != w {
		t.Errorf("window values → %+v, %v", got, err)
	}

	a := route.Action{Kind: "remove-leaderboard-entry", Conn: "main", DB: 14, Key: key, Args: map[string]string{"member": "m\xfe"}}
	got, err := route.ParseAction(query(t, a.PreviewURL()))
	if err != nil || got.Kind != a.Kind || got.Conn != a.Conn || got.DB != a.DB || got.Key != a.Key || got.Args["member"] != "m\xfe" {
		t.Errorf("action → %q → %+v, %v", a.PreviewURL(), got, err)
	}
	for _, m := range []string{"twin", "twin ", " twin ", "twin\u00a0", "twin\xff", "\t", " "} {
		a.Args = map[string]string{"member": m}
		if got, err := route.ParseAction(query(t, a.PreviewURL())); err != nil || got.Args["member"] != m {
			t.Errorf("argument %q → %q → %q, %v", m, a.PreviewURL(), got.Args["member"], err)
		}
	}

	f := route.AuditFilter{User: "ada", Key: key, Since: time.Date(2026, 11, 29, 14, 30, 0, 0, time.UTC), Before: "1-2"}
	if got, err := route.ParseAuditFilter(query(t, f.URL())); err != nil || got != f {
		t.Errorf("filter → %q → %+v, %v", f.URL(), got, err)
	}
	if got := (route.AuditFilter{}).URL(); got != "/audit" {
		t.Errorf("empty filter URL = %q", got)
	}

	u := route.Undo{Conn: "main", DB: 3, Record: "1-1"}
	if got, err := route.ParseUndo(query(t, u.URL())); err != nil || got != u {
		t.Errorf("undo → %+v, %v", got, err)
	}
}

func TestParamErrors(t *testing.T) {
	for name, err := range map[string]error{
		"no key":           second(route.ParseKey(url.Values{})),
		"window n":         second(route.ParseWindow("m", 0, url.Values{"k": {"x"}, "n": {"501"}})),
		"window start":     second(route.ParseWindow("m", 0, url.Values{"k": {"x"}, "start": {"-1"}})),
		"audit time":       second(route.ParseAuditFilter(url.Values{"since": {"yesterday"}})),
		"action db":        second(route.ParseAction(url.Values{"db": {"x"}})),
		"action arg twice": second(route.ParseAction(url.Values{"db": {"0"}, "arg.member": {"twin", "twin "}})),
	} {
		if !errors.Is(err, route.ErrParam) {
			t.Errorf("%s: %v, want ErrParam", name, err)
		}
	}
}

func second[T any](_ T, err error) error { return err }

func query(t *testing.T, u string) url.Values {
	t.Helper()
	p, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	return p.Query()
}

// The value parameters survive a link byte for byte, glob characters and
// invalid UTF-8 included; malformed ones are refused.
func TestValueURLRoundTrip(t *testing.T) {
	v := route.Value{At: "(1700000000000-3", Filter: "a*b?[c]\xff&q=x", View: "hex", Desc: true,
		Min: "(1.5", Max: "+inf", Member: "m,\xfe&x", Trail: []string{"0", "17"}}
	u, err := url.Parse(route.KeyValueURL("main", 2, "k\x00ey", v))
	if err != nil {
		t.Fatal(err)
	}
	got, err := route.ParseValue(u.Query())
	if err != nil || !reflect.DeepEqual(got, v) {
		t.Fatalf("%+v, %v; want %+v", got, err, v)
	}
	if key, _ := route.ParseKey(u.Query()); key != "k\x00ey" {
		t.Fatalf("key %q", key)
	}
	for _, q := range []url.Values{{"at": {"1;x"}}, {"view": {"raw"}}, {"q": {strings.Repeat("x", route.MaxFilter+1)}},
		{"order": {"up"}}, {"min": {strings.Repeat("1", 65)}}, {"trail": {"1,x"}}, {"trail": {"01"}},
		{"trail": {strings.Repeat("1,", route.MaxTrail) + "1"}}, {"m": {strings.Repeat("m", route.MaxKey+1)}}} {
		if _, err := route.ParseValue(q); !errors.Is(err, route.ErrParam) {
			t.Errorf("%v: %v", q, err)
		}
	}
}

// A record page's id is a stream id; anything else names no page.
func TestParseAuditRecordID(t *testing.T) {
	if got := route.AuditRecordURL("1733150000000-12"); got != "/audit/1733150000000-12" {
		t.Errorf("URL = %q", got)
	}
	if id, err := route.ParseAuditRecordID("1733150000000-12"); err != nil || id != "1733150000000-12" {
		t.Errorf("valid id: %q, %v", id, err)
	}
	for _, bad := range []string{"", "-", "1-", "-1", "1-2-3", "x-1", "1 -2", "<b>-1", "123456789012345678901-0"} {
		if _, err := route.ParseAuditRecordID(bad); !errors.Is(err, route.ErrNoPage) {
			t.Errorf("%q: %v, want ErrNoPage", bad, err)
		}
	}
}
