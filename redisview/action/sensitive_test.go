package action

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/schema"
)

func TestSensitiveValuesNeverLeave(t *testing.T) {
	f := setup(t, Options{})
	f.conn.ForcePack(schema.BuiltinPack("eisland"))
	const (
		totpKey    = "totp:security:secret:plain:alice"
		totpSecret = "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP"
		codeKey    = "verify:code:LOGIN:a@b.c"
		codeHash   = "9af15b336e6a9619928537df30b2e6a2376569fcf9d7e773eccede65606529a0"
	)
	f.db(5).Set(f.ctx, totpKey, totpSecret, time.Minute)
	f.db(2).Set(f.ctx, codeKey, codeHash, 5*time.Minute)
	secrets := []string{totpSecret, codeHash}
	for _, k := range []struct {
		db  int
		key string
	}{{5, totpKey}, {2, codeKey}} {
		d := f.db(k.db).Dump(f.ctx, k.key).Val()
		secrets = append(secrets, base64.StdEncoding.EncodeToString([]byte(d)), hex.EncodeToString([]byte(d)), strings.Trim(fmt.Sprint([]byte(d)), "[]"))
	}
	for _, s := range secrets[:2] {
		secrets = append(secrets, base64.StdEncoding.EncodeToString([]byte(s)), base64.RawURLEncoding.EncodeToString([]byte(s)), hex.EncodeToString([]byte(s)), s[:12], strings.Trim(fmt.Sprint([]byte(s[:12])), "[]"))
	}
	var seen []string // everything the package handed out
	check := func(what string) {
		t.Helper()
		for _, s := range secrets {
			for _, out := range seen {
				if strings.Contains(out, s) {
					t.Fatalf("%s leaks %q in %q", what, s, out)
				}
			}
		}
	}

	for _, k := range []struct {
		db  int
		key string
	}{{5, totpKey}, {2, codeKey}} {
		pv, err := f.r.Preview(f.ctx, admin, f.conn, "delete-key", f.req(k.db, k.key))
		if err != nil {
			t.Fatal(err)
		}
		if pv.Undoable || len(pv.Notes) == 0 || !pv.Changes[0].Before.Sensitive || pv.Changes[0].Before.Excerpt != "" {
			t.Fatalf("preview of %s does not treat it as sensitive: %+v", k.key, pv)
		}
		if !strings.HasPrefix(pv.Fingerprints[0], "hmac/2:") {
			t.Fatalf("fingerprint of a sensitive value is not keyed: %s", pv.Fingerprints[0])
		}
		js, _ := json.Marshal(pv)
		seen = append(seen, string(js), fmt.Sprintf("%+v", pv), pv.Token())
		check("preview")
		out, err := f.r.Execute(f.ctx, admin, f.conn, pv)
		if err != nil {
			t.Fatal(err)
		}
		js, _ = json.Marshal(out)
		seen = append(seen, string(js), fmt.Sprintf("%+v", out))
		check("outcome")
		if f.db(k.db).Exists(f.ctx, k.key).Val() != 0 {
			t.Fatal("not deleted")
		}
		_, err = f.r.Preview(f.ctx, admin, f.conn, "undo", UndoRequest(f.last()))
		wantErr(t, err, ErrNotUndoable, "sensitive and was not recorded")
	}

	// Every field of every audit record, as stored.
	priors := 0
	for _, m := range f.raw() {
		for k, v := range m.Values {
			seen = append(seen, k+"="+fmt.Sprint(v))
		}
		r := parseRecord(m)
		for _, tg := range r.Targets {
			if r.Phase == PhaseIntent {
				if tg.Prior != PriorSensitive || tg.Before != "" || !tg.Sensitive {
					t.Fatalf("intent target %+v", tg)
				}
				priors++
			}
			if tg.After != "" {
				t.Fatalf("fingerprint of a sensitive key recorded: %+v", tg)
			}
		}
	}
	check("audit stream")
	if priors != 2 {
		t.Fatalf("%d intent targets, want 2", priors)
	}
	// And a failed action's message names the key, never the value.
	f.db(5).Set(f.ctx, totpKey, totpSecret, time.Minute)
	pv, _ := f.r.Preview(f.ctx, admin, f.conn, "delete-key", f.req(5, totpKey))
	f.db(5).Set(f.ctx, totpKey, totpSecret+"X", time.Minute)
	_, err := f.r.Execute(f.ctx, admin, f.conn, pv)
	wantErr(t, err, ErrChanged, "")
	seen = append(seen, err.Error(), fmt.Sprint(f.last()))
	check("error")
}

// A connection offered packs whose first sampling has not run yet (the
// seconds after start-up, or no monitor running): no key's family is
// known, so a preview of a TOTP secret shows no value and the audit
// records none (the action layer asked the classifier, nil until
// sampled, and showed and recorded it).
func TestActionWithheldBeforeTheFirstSampling(t *testing.T) {
	f := setup(t, Options{})
	reg, err := redisview.NewRegistry([]redisview.ConnConfig{{Name: "main", URL: f.target.URL(0)}}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = reg.Close() })
	if err := reg.UsePacks(schema.Builtin(), nil); err != nil {
		t.Fatal(err)
	}
	conn, _ := reg.Get("main")
	const totpKey, totpSecret = "totp:security:secret:plain:alice", "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP"
	f.db(5).Set(f.ctx, totpKey, totpSecret, time.Minute)
	pv, err := f.r.Preview(f.ctx, admin, conn, "delete-key", f.req(5, totpKey))
	if err != nil {
		t.Fatal(err)
	}
	js, _ := json.Marshal(pv)
	if !pv.Changes[0].Before.Sensitive || strings.Contains(string(js), totpSecret) || strings.Contains(fmt.Sprintf("%+v", pv), totpSecret[:12]) {
		t.Fatalf("preview before sampling shows the value: %s", js)
	}
	if _, err := f.r.Execute(f.ctx, admin, conn, pv); err != nil {
		t.Fatal(err)
	}
	for _, m := range f.raw() {
		for k, v := range m.Values {
			if s := fmt.Sprint(v); strings.Contains(s, totpSecret[:12]) || strings.Contains(s, base64.StdEncoding.EncodeToString([]byte(totpSecret))[:12]) {
				t.Fatalf("audit field %s records the value: %s", k, s)
			}
		}
	}
}
