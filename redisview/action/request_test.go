package action

import (
	"strings"
	"testing"
	"time"
)

func TestPreviewTravelsAsToken(t *testing.T) {
	now := time.Now()
	f := setup(t, Options{Now: func() time.Time { return now }})
	seed(t, f.db(3), "string", "lock:x", 0)
	pv, err := f.r.Preview(f.ctx, admin, f.conn, "set-ttl", f.req(3, "lock:x", "ttl", "2h"))
	if err != nil {
		t.Fatal(err)
	}
	c := pv.Changes[0]
	if c.Op != "expire" || c.After != "TTL 2h" || c.Before.Excerpt != "holder-3f2a\x00\xffbinary" || c.Before.Size != 19 || c.Before.Unit != "bytes" {
		t.Fatalf("change %+v", c)
	}
	if want := `SET TTL 2h on "lock:x" (before: no TTL)`; pv.Summary != want {
		t.Fatalf("summary %q", pv.Summary)
	}
	back, err := ParseToken(pv.Token())
	if err != nil {
		t.Fatal(err)
	}
	if back.Kind != pv.Kind || back.Request.Args["ttl"] != "2h" || back.Fingerprints[0] != pv.Fingerprints[0] || !back.Made.Equal(pv.Made.Truncate(time.Millisecond)) {
		t.Fatalf("round trip: %+v", back)
	}

	// A forged fingerprint is just a stale one.
	// Each refused attempt below uses up its own confirmation.
	forged := back
	forged.Nonce = newNonce()
	forged.Fingerprints = []string{"sha256:00"}
	_, err = f.r.Execute(f.ctx, admin, f.conn, forged)
	wantErr(t, err, ErrChanged, "")
	// A preview for another connection, or with the wrong number of keys.
	other := back
	other.Nonce = newNonce()
	other.Request.Conn = "elsewhere"
	_, err = f.r.Execute(f.ctx, admin, f.conn, other)
	wantErr(t, err, ErrInvalid, "elsewhere")
	short := back
	short.Nonce = newNonce()
	short.Fingerprints = nil
	_, err = f.r.Execute(f.ctx, admin, f.conn, short)
	wantErr(t, err, ErrInvalid, "does not match")

	// Too old to confirm.
	now = now.Add(16 * time.Minute)
	_, err = f.r.Execute(f.ctx, admin, f.conn, back)
	wantErr(t, err, ErrInvalid, "preview again")
	now = now.Add(-16 * time.Minute)
	if _, err := f.r.Execute(f.ctx, admin, f.conn, back); err != nil {
		t.Fatal(err)
	}
	if ttl := f.db(3).TTL(f.ctx, "lock:x").Val(); ttl < time.Hour {
		t.Fatalf("TTL %v", ttl)
	}

	for _, bad := range []string{"", "!!", "e30", pv.Token()[:10]} {
		if _, err := ParseToken(bad); err == nil {
			t.Fatalf("ParseToken(%q) accepted", bad)
		}
	}
}

func TestRequestValidation(t *testing.T) {
	f := setup(t, Options{MaxPriorBytes: 100})
	seed(t, f.db(0), "string", "k", 0)
	f.db(0).Set(f.ctx, "big", strings.Repeat("x", 1000), 0)
	cases := []struct {
		kind string
		req  Request
		want string
	}{
		{"nope", f.req(0, "k"), "unknown action"},
		{"delete-key", f.req(0, ""), "empty"},
		{"delete-key", f.req(-1, "k"), "out of range"},
		{"delete-key", f.req(0, "k", "force", "yes"), `unknown argument "force"`},
		{"set-ttl", f.req(0, "k"), "ttl is required"},
		{"set-ttl", f.req(0, "k", "ttl", "300"), "needs a unit"},
		{"set-ttl", f.req(0, "k", "ttl", "500ms"), "out of range"},
		{"set-ttl", f.req(0, "k", "ttl", "366d"), "bad day count"},
		{"set-ttl", f.req(0, "k", "ttl", "persist"), "already has no TTL"},
		{"delete-key", f.req(0, "big"), "could not be undone"},
		{"undo", f.req(0, ""), "record is required"},
	}
	for _, c := range cases {
		_, err := f.r.Preview(f.ctx, admin, f.conn, c.kind, c.req)
		wantErr(t, err, ErrInvalid, c.want)
	}
	_, err := f.r.Preview(f.ctx, admin, f.conn, "set-ttl", f.req(0, "gone", "ttl", "1h"))
	wantErr(t, err, ErrNotFound, "does not exist")
	for _, k := range []string{DefaultStream, DefaultStream + ":undone:1-1"} {
		_, err = f.r.Preview(f.ctx, admin, f.conn, "delete-key", f.req(15, k))
		wantErr(t, err, ErrForbidden, "audit log")
	}
}

func TestParseTTL(t *testing.T) {
	ok := map[string]time.Duration{
		"1s": time.Second, "90s": 90 * time.Second, "10m": 10 * time.Minute, "1h30m": 90 * time.Minute,
		"7d": 7 * 24 * time.Hour, "1d12h": 36 * time.Hour, "365d": 365 * 24 * time.Hour, " 2H ": 2 * time.Hour,
	}
	for s, want := range ok {
		got, persist, err := parseTTL(s)
		if err != nil || persist || got != want {
			t.Errorf("parseTTL(%q) = %v, %v, %v", s, got, persist, err)
		}
	}
	if _, persist, err := parseTTL("PERSIST"); !persist || err != nil {
		t.Error("persist")
	}
	for _, s := range []string{"", "0s", "999ms", "365d1s", "-5m", "5", "d", "1x", "1d-1h", "abc"} {
		if _, _, err := parseTTL(s); err == nil {
			t.Errorf("parseTTL(%q) accepted", s)
		}
	}
}
