package server_test

import (
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/internal/redistest"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/server"
)

func TestSlowlogEntries(t *testing.T) {
	s := redistest.Start(t)
	ctx := ctxT(t)
	conn := eislandConn(t, s)
	app := s.Client(5)
	defer app.Close()
	if err := app.ConfigSet(ctx, "slowlog-log-slower-than", "0").Err(); err != nil {
		t.Fatal(err)
	}
	app.SlowLogReset(ctx)
	app.Set(ctx, "plain:key", "visible-value", 0)
	app.Set(ctx, "totp:security:secret:plain:alice", "SECRETMARKER", 0)
	app.Set(ctx, "long:arg", strings.Repeat("x", 300), 0)
	// A name the server cuts short: only its beginning is known.
	app.Set(ctx, "totp:security:secret:plain:"+strings.Repeat("u", 200), "SECRETMARKER", 0)
	many := []any{"rpush", "many:args"}
	for i := range 40 {
		many = append(many, i)
	}
	app.Do(ctx, many...)
	conn.Client().Ping(ctx) // Keydeck's own
	app.Set(ctx, "keydeck:session-secret", "OWNSECRET", 0)
	app.XAdd(ctx, &redis.XAddArgs{Stream: "app:audit", Values: []any{"prior", "OWNSECRET"}})

	sl := server.ReadSlowlog(ctx, redisview.ServerFor(conn.Client()), conn, func(k string) bool { return k == "app:audit" })
	if sl.Err != "" || !sl.Threshold.OK || sl.Threshold.V != 0 || !sl.MaxLen.OK || !sl.Len.OK {
		t.Fatalf("slowlog = %+v", sl)
	}
	by := map[string]server.SlowEntry{}
	for _, e := range sl.Entries {
		if len(e.Args) > 0 {
			by[e.Command+" "+e.Args[0].Text] = e
		} else {
			by[e.Command] = e
		}
		if e.Withheld != "" && len(e.Args) > 0 {
			t.Errorf("entry %d withheld yet shows arguments", e.ID)
		}
	}
	if e, ok := by["set plain:key"]; !ok || e.Args[1].Text != "visible-value" || e.Own {
		t.Errorf("plain SET entry = %+v (ok %v)", e, ok)
	}
	found := false
	for _, e := range sl.Entries {
		for _, a := range e.Args {
			if strings.Contains(a.Text, "SECRET") || strings.Contains(a.Text, "totp:security") {
				t.Errorf("sensitive argument shown: %+v", e)
			}
		}
		if e.Command == "set" && strings.Contains(e.Withheld, "sensitive family totp-secret-plain") {
			found = true
			if e.MoreArgs != 2 {
				t.Errorf("withheld entry counts %d arguments, want 2", e.MoreArgs)
			}
		}
	}
	if n := strings.Count(fmtEntries(sl.Entries), "a key of Keydeck's own"); n != 2 {
		t.Errorf("%d entries withheld as Keydeck's own, want 2 (the secret and the audit log)", n)
	}
	if !found || strings.Count(fmtEntries(sl.Entries), "totp-secret-plain") != 2 {
		t.Errorf("no SET entry withheld for the TOTP secret: %+v", sl.Entries)
	}
	if e := by["set long:arg"]; len(e.Args) != 2 || len(e.Args[1].Text) > server.ArgMaxBytes || e.Args[1].More == 0 {
		t.Errorf("long argument kept as %+v", e.Args)
	}
	if e := by["rpush many:args"]; e.MoreArgs == 0 || len(e.Args) > server.ArgMaxCount {
		t.Errorf("many arguments kept as %d, %d more", len(e.Args), e.MoreArgs)
	}
	if e, ok := by["ping"]; !ok || !e.Own || e.ClientName != server.OwnClientName {
		t.Errorf("Keydeck's PING = %+v (ok %v), want it marked own", e, ok)
	}
}

func TestSlowlogWithholdsPasswords(t *testing.T) {
	s := redistest.Start(t)
	ctx := ctxT(t)
	conn := eislandConn(t, s)
	app := s.Client(0)
	defer app.Close()
	app.ConfigSet(ctx, "slowlog-log-slower-than", "0")
	app.SlowLogReset(ctx)
	app.ConfigSet(ctx, "masterauth", "PASSMARKER")
	app.Do(ctx, "acl", "setuser", "bob", ">PASSMARKER2")
	// Settings the CONFIG page withholds though their names say no "pass".
	app.ConfigSet(ctx, "masteruser", "USERMARKER")
	sl := server.ReadSlowlog(ctx, redisview.ServerFor(conn.Client()), conn, nil)
	n := 0
	for _, e := range sl.Entries {
		for _, a := range e.Args {
			if strings.Contains(a.Text, "PASSMARKER") || strings.Contains(a.Text, "USERMARKER") {
				t.Errorf("password shown: %+v", e)
			}
		}
		if strings.Contains(e.Withheld, "password") {
			n++
		}
	}
	if n < 3 {
		t.Errorf("%d entries withheld for a password, want 3: %+v", n, sl.Entries)
	}
}

func fmtEntries(es []server.SlowEntry) string {
	var b strings.Builder
	for _, e := range es {
		b.WriteString(e.Withheld + "\n")
	}
	return b.String()
}
