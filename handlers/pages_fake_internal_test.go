package handlers

import (
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/keydeck/keydeck/internal/route"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/bans"
	"github.com/keydeck/keydeck/redisview/decode"
	"github.com/keydeck/keydeck/redisview/limits"
	"github.com/keydeck/keydeck/redisview/schema"
	"github.com/keydeck/keydeck/redisview/search"
)

// The view-model builders of the user, bans, Rate limits and Locks pages
// map page data built by hand: no Redis is reached (the connection points
// at a closed port and is never read).

func offlineConn(t *testing.T, p *schema.Pack) *redisview.Conn {
	t.Helper()
	conn, err := redisview.Open(redisview.ConnConfig{Name: "main", URL: "redis://127.0.0.1:1/0"}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	conn.ForcePack(p)
	return conn
}

func TestBanListVMFromPageData(t *testing.T) {
	t.Parallel()
	ban := bans.List{ID: "bans", DB: 3, BloomKey: "ban:bloom", SetKey: "ban:set", Bans: true, Bits: 1024, Hashes: 3}
	filter := ban
	filter.Bans = false
	done := func(checked, bad int64) bans.Status {
		return bans.Status{Last: &bans.Consistency{Checked: checked, Bad: bad, Complete: true, Examples: []string{"eve"}}}
	}
	errText := func(what string, err error) string { return what + ": " + err.Error() }
	members := &bans.Page{Members: []string{"ann", "eve"}, Count: 2}
	for _, tc := range []struct {
		name       string
		r          bans.ListRead
		act        bool
		actions    bool
		note, err  string
		eveFix     bool // eve lacks bits: her row offers the fix, not an unban
		annUnban   bool
		checkTone  string
		checkUnban bool
	}{
		{"consistent ban list, support", bans.ListRead{List: ban, Status: done(2, 0), Members: members, Check: &bans.Check{InSet: true, BloomHit: true, Verdict: bans.Listed}},
			true, true, "", "", false, true, "bad", true},
		{"one member lacks bits: its fix, others as usual", bans.ListRead{List: ban, Status: done(2, 1), Members: members, Lacking: map[string]bool{"eve": true}},
			true, true, "Some members lack bloom bits", "", true, true, "", false},
		{"most lack bits: ban and unban disabled", bans.ListRead{List: ban, Status: done(10, 9), Members: members},
			true, false, "Ban and unban are disabled", "", false, false, "", false},
		{"unreadable bloom: no actions, the error said", bans.ListRead{List: ban, HealthErr: errors.New("boom"), Members: members},
			true, false, "", "Cannot read the bloom: boom", false, false, "", false},
		{"a filter is read-only", bans.ListRead{List: filter, Status: done(2, 0)},
			true, false, "Read-only", "", false, false, "", false},
		{"a viewer gets no actions", bans.ListRead{List: ban, Status: done(2, 0), Members: members},
			false, false, "", "", false, false, "", false},
		{"sensitive: nothing shown", bans.ListRead{List: ban, Sensitive: true},
			true, false, "", "Sensitive", false, false, "", false},
	} {
		q := route.BansQuery{Conn: "main"}
		if tc.r.Check != nil {
			q.Check = "ann"
		}
		v := banListVM("main", tc.r, q, tc.act, errText)
		if v.Actions != tc.actions || !strings.HasPrefix(v.ActionsNote, tc.note) || (tc.note == "" && v.ActionsNote != "") {
			t.Errorf("%s: actions %v, note %q", tc.name, v.Actions, v.ActionsNote)
		}
		if !strings.HasPrefix(v.Err, tc.err) || (tc.err == "" && v.Err != "") {
			t.Errorf("%s: error %q", tc.name, v.Err)
		}
		for _, row := range v.Members.Rows {
			switch row.Name {
			case "eve":
				if (row.FixHref != "") != tc.eveFix || (tc.eveFix && row.UnbanHref != "") {
					t.Errorf("%s: eve's row %+v", tc.name, row)
				}
			case "ann":
				if (row.UnbanHref != "") != tc.annUnban {
					t.Errorf("%s: ann's row %+v", tc.name, row)
				}
			}
		}
		if tc.r.Check != nil && (v.Check == nil || v.Check.Tone != tc.checkTone || (v.Check.UnbanHref != "") != tc.checkUnban) {
			t.Errorf("%s: check %+v", tc.name, v.Check)
		}
	}
}

func TestLimitsAndLocksVMFromSnapshot(t *testing.T) {
	t.Parallel()
	win := &schema.Family{ID: "login-window", Domain: "auth", Role: schema.RoleCounterWindow, Type: "string", Params: &schema.CounterWindowParams{Limit: 5, Window: time.Minute}}
	lock := &schema.Family{ID: "job-lock", Domain: "jobs", Role: schema.RoleLock, Type: "string", Params: &schema.LockParams{Value: "uuid"}}
	pack := &schema.Pack{Name: "fake", Families: []*schema.Family{win, lock}}
	conn := offlineConn(t, pack)
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	vars := func(v string) []schema.Var { return []schema.Var{{Name: "user", Value: v, Raw: v}} }
	snap := limits.Snapshot{Pack: pack, Budget: limits.DefaultBudget, Families: []limits.FamilySnap{
		{Family: win, Class: decode.ClassLimit, Read: true, Passes: 1, Total: 2, Rows: []limits.Row{
			{Key: "w:bob", Family: win, ReadAt: t0, PTTL: time.Minute, State: decode.WindowRow{Count: 1}, Vars: vars("bob")},
			{Key: "w:ann", Family: win, ReadAt: t0, PTTL: time.Minute, State: decode.WindowRow{Count: 5}, Vars: vars("ann")},
		}},
		{Family: lock, Class: decode.ClassLock, Read: true, Passes: 1, Total: 1, Rows: []limits.Row{
			{Key: "l:1", Family: lock, ReadAt: t0, PTTL: time.Minute, State: decode.HeldRow{Holder: "5d0c"}, Vars: vars("1")},
		}},
	}}
	for _, tc := range []struct {
		name, filter string
		rows         []string
		chips        int
		empty        string
	}{
		{"every row, the throttled first", "", []string{"w:ann", "w:bob"}, 1, ""},
		{"filtered", "bob", []string{"w:bob"}, 0, ""},
		{"nothing matches", "zed", nil, 0, `No rate-limit row kept matches "zed".`},
	} {
		vm := limitsVM(conn, snap, OpsTopic{Kind: limitsKind, Conn: "main", Filter: tc.filter, Act: true}, t0)
		var rows []string
		for _, g := range vm.Groups {
			for _, r := range g.Rows {
				rows = append(rows, r.Key)
			}
		}
		if strings.Join(rows, ",") != strings.Join(tc.rows, ",") || len(vm.Summary) != tc.chips || vm.Empty != tc.empty {
			t.Errorf("%s: rows %v, %d chips, empty %q", tc.name, rows, len(vm.Summary), vm.Empty)
		}
		if tc.filter == "" && (vm.Groups[0].Label != "2 keys" || vm.Groups[0].Rows[0].State != "throttled" || len(vm.Groups[0].Rows[0].Actions) != 1) {
			t.Errorf("%s: group %+v", tc.name, vm.Groups[0])
		}
	}
	lv := locksVM(conn, snap, OpsTopic{Kind: locksKind, Conn: "main"}, t0)
	if len(lv.Groups) != 1 || lv.Groups[0].Family != "job-lock" || len(lv.Groups[0].Rows) != 1 || lv.Groups[0].Rows[0].Holder != "5d0c" {
		t.Errorf("locks: %+v", lv.Groups)
	}
}

func TestUserLiveVMFromPageData(t *testing.T) {
	t.Parallel()
	pack := schema.BuiltinPack("eisland")
	conn := offlineConn(t, pack)
	var balance *schema.Family
	for _, f := range pack.Families {
		if f.ID == "agent-balance" {
			balance = f
		}
	}
	if balance == nil {
		t.Fatal("the eisland pack has no agent-balance family")
	}
	board := search.Board{DB: 14, Key: "mg:score:leaderboard:2048"}
	page := search.UserPage{UserResult: search.UserResult{
		Subject: search.Subject{Name: "ann", Email: "ann@example.com", EmailFrom: "given"},
		Hits: []search.UserHit{
			{Hit: search.Hit{DB: 0, Key: "misc:ann", Type: "string", TTL: -1}},
			{Hit: search.Hit{DB: 12, Key: "agent:balance:ann", Family: balance, Type: "string", TTL: -1}},
		},
		Ranks:    []search.Rank{{Board: board, Found: true, Rank: 2, Score: 4096}, {Board: board, Sensitive: true}, {Board: board, Err: "ZRANK is not permitted for this Redis user (ACL)"}},
		Bans:     []search.BanCheck{{DB: 3, BloomKey: "b", SetKey: "s", HasSet: true, AllSet: true, InSet: true, Verdict: "banned", Positions: []int64{1}, Bits: []bool{true}}},
		Checked:  9,
		Commands: 20,
	}}
	a := &App{}
	vm := a.userLiveVM(conn, UserTopic{Conn: "main", Name: "ann"}, page, time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
	if vm.Found != 2 || vm.Checked != 9 || vm.EmailFrom != "given with the name" {
		t.Errorf("header %+v", vm)
	}
	if len(vm.Groups) != 2 || vm.Groups[1].Title != "Keys of no family" || vm.Groups[0].Keys[0].Key != "agent:balance:ann" {
		t.Errorf("groups %+v", vm.Groups)
	}
	if len(vm.Ranks) != 3 || vm.Ranks[0].Rank != "#3" || !vm.Ranks[1].Sensitive || vm.Ranks[1].Href != "" ||
		vm.Ranks[2].Unread != "ZRANK is not permitted for this Redis user (ACL)" || vm.Ranks[2].Found {
		t.Errorf("ranks %+v", vm.Ranks)
	}
	if len(vm.Bans) != 1 || !vm.Bans[0].Banned || !vm.Bans[0].Positions[0].Set {
		t.Errorf("bans %+v", vm.Bans)
	}
}
