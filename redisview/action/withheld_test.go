package action

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/redisview/schema"
)

// On a sensitive board the member is withheld, and so is the name of every
// key built from it (the entry's metadata and high-score keys): neither
// the preview, nor the outcome, nor an audit record, an error or an undo
// refusal names them. The action still deletes them.
func TestSensitiveMemberNotShownThroughCompanionNames(t *testing.T) {
	f := setup(t, Options{})
	f.conn.ForcePack(sensitivePack(t))
	const member = "canaryuser"
	f.seedEntry(member, 4242)
	f.seedEntry("other", 1)
	var seen []string
	check := func(what string) {
		t.Helper()
		for _, s := range seen {
			if strings.Contains(s, member) {
				t.Fatalf("%s names the member: %.600s", what, s)
			}
		}
	}
	shown := func(v any) string {
		js, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return string(js) + fmt.Sprintf("%+v", v)
	}

	pv, err := f.r.Preview(f.ctx, support, f.conn, lbKind, f.entryReq(member))
	if err != nil {
		t.Fatal(err)
	}
	// The request is the person's own (the token carries it back to them);
	// everything the preview says is checked.
	seen = append(seen, shown(pv.Changes), pv.Summary, shown(pv.Notes), pv.Title)
	check("preview")
	if len(pv.Changes) != 3 || pv.Changes[1].Op != "delete" || pv.Changes[2].Op != "delete" || pv.Undoable {
		t.Fatalf("preview %+v", pv)
	}
	for _, ch := range pv.Changes[1:] {
		if !strings.Contains(ch.Text, "name withheld") || !strings.Contains(ch.Key, "withheld") {
			t.Fatalf("the companion is not said to be withheld: %+v", ch)
		}
	}
	if pv.Changes[1].Key == pv.Changes[2].Key {
		t.Fatalf("two companions stand in under one name %q", pv.Changes[1].Key)
	}

	out, err := f.r.Execute(f.ctx, support, f.conn, pv)
	if err != nil {
		t.Fatal(err)
	}
	seen = append(seen, shown(out.Changes), out.Summary)
	check("outcome")
	if n := f.db(lbDB).Exists(f.ctx, metaKey(member), highKey(member)).Val(); n != 0 || f.db(lbDB).ZScore(f.ctx, lbBoard, member).Err() == nil {
		t.Fatalf("the entry was not removed whole (%d companions left)", n)
	}
	if n := f.db(lbDB).Exists(f.ctx, metaKey("other"), highKey("other")).Val(); n != 2 {
		t.Fatal("another entry's companions were touched")
	}
	done := f.last()
	if len(done.Keys) != 3 || done.Keys[0] != lbBoard {
		t.Fatalf("recorded keys %q", done.Keys)
	}
	_, err = f.r.Preview(f.ctx, admin, f.conn, "undo", UndoRequest(done))
	wantErr(t, err, ErrNotUndoable, "sensitive")
	seen = append(seen, err.Error())
	check("undo refusal")

	// A companion changed between preview and confirm: the refusal names
	// no companion either.
	f.seedEntry(member, 4242)
	pv, err = f.r.Preview(f.ctx, support, f.conn, lbKind, f.entryReq(member))
	if err != nil {
		t.Fatal(err)
	}
	f.db(lbDB).Set(f.ctx, highKey(member), "1", 0)
	_, err = f.r.Execute(f.ctx, support, f.conn, pv)
	wantErr(t, err, ErrChanged, "")
	seen = append(seen, err.Error())
	check("the refusal of a changed companion")

	// Every field of every audit record, as stored and as read.
	for _, m := range f.raw() {
		for k, v := range m.Values {
			seen = append(seen, k+"="+fmt.Sprint(v))
		}
	}
	for _, r := range f.records() {
		seen = append(seen, shown(r))
	}
	check("the audit log")
}

// A member of a sensitive board whose companion key cannot be built, or
// would be another family's key, is refused without naming the member or
// that key.
func TestSensitiveMemberNotShownInPlanRefusals(t *testing.T) {
	f := setup(t, Options{})
	pack, err := schema.Load("lbtest", []byte(`name: lbtest
title: Boards
families:
  - id: board
    pattern: "lb:board:{gameId:segment}"
    type: zset
    ttl: none
    domain: Game
    role: leaderboard
    sensitive: true
    params:
      member: userId
      meta: "lb:meta:{gameId}:{userId}"
      high_score: "lb:high:{gameId}:{userId}"
    description: A board.
  - id: meta
    pattern: "lb:meta:{gameId:segment}:{userId}"
    type: hash
    ttl: none
    domain: Game
    role: leaderboard-meta
    params:
      leaderboard: "lb:board:{gameId}"
    description: A row.
  - id: vip-meta
    pattern: "lb:meta:{gameId:segment}:vip:{vipId}"
    type: hash
    ttl: none
    domain: Game
    role: cache
    description: Not a row.
  - id: high
    pattern: "lb:high:{gameId:segment}:{userId:segment}"
    type: string
    ttl: none
    domain: Game
    role: cache
    description: A high score.
`))
	if err != nil {
		t.Fatal(err)
	}
	f.conn.ForcePack(pack)
	for _, member := range []string{"vip:canaryuser", "canary:user"} {
		f.db(0).ZAdd(f.ctx, "lb:board:g", redis.Z{Score: 1, Member: member})
		_, err := f.r.Preview(f.ctx, support, f.conn, lbKind, f.req(0, "lb:board:g", "member", member))
		wantErr(t, err, ErrInvalid, "cannot be removed whole")
		for _, s := range []string{member, "canary", "':'"} {
			if strings.Contains(err.Error(), s) {
				t.Fatalf("the refusal names %q: %v", s, err)
			}
		}
	}
}
