package apiv1

import (
	"encoding/base64"
	"testing"

	"github.com/keydeck/keydeck/redisview/action"
)

func TestAuditMapsEntriesAndPriors(t *testing.T) {
	dump := base64.StdEncoding.EncodeToString(make([]byte, 37))
	intent := action.Record{ID: "1764619200000-0", Time: t0, Phase: action.PhaseIntent, User: "alice", Level: "support", Action: "unban",
		Conn: "eisland", DB: 9, Keys: []string{"user:ban:set", "user:ban:bloom"}, Args: map[string]string{"name": "eve\xff"}, Summary: "unban eve",
		Targets: []action.Target{
			{Key: "user:ban:set", Type: "set", Size: 3, PTTL: -1, Member: &action.MemberState{Kind: action.PartSMember, Name: "eve\xff", Present: true, Rank: -1}},
			{Key: "mg:score:leaderboard:1", Type: "zset", PTTL: 5000, Member: &action.MemberState{Name: "bob", Present: true, Score: "1200.5", Rank: 0}},
			{Key: "mg:score:leaderboard:2", Type: "zset", PTTL: 5000, Member: &action.MemberState{Name: "x", Present: true, Score: "-inf", Rank: -1}},
			{Key: "user:ban:bloom", Type: "string", PTTL: -1, Member: &action.MemberState{Kind: action.PartBits, Offsets: []int64{5, 900}, Bits: "10", Present: true}},
			{Key: "k:dumped", Type: "hash", Size: 4, Unit: "fields", PTTL: 60000, Prior: dump},
			{Key: "k:snap", Type: "list", PTTL: -1, Snapshot: &action.Snapshot{Type: "list", Elems: []string{"v1"}}},
			{Key: "k:gone", Type: "none", PTTL: -2},
		}}
	outcome := action.Record{ID: "1764619200001-0", Time: t0, Phase: action.PhaseOutcome, Ref: intent.ID, User: "alice", Level: "support",
		Action: "unban", Conn: "eisland", DB: 9, Keys: intent.Keys, Outcome: action.OutcomeOK, Targets: []action.Target{{Key: "user:ban:set", After: "fp"}}}
	page := Audit([]action.Record{outcome, intent}, "1764619100000-0")

	if *page.Entries.Next != "1764619100000-0" || len(page.Entries.Items) != 2 {
		t.Fatalf("page %+v", page)
	}
	o, in := page.Entries.Items[0], page.Entries.Items[1]
	if !o.Undoable || o.Outcome != "ok" || o.Ref != intent.ID || len(o.Targets) != 0 || o.Actor.User != "alice" {
		t.Errorf("outcome %+v", o)
	}
	want := []string{PriorOfPart, PriorOfPart, PriorOfPart, PriorOfPart, PriorDump, PriorSnapshot, PriorAbsent}
	for i, tg := range in.Targets {
		if tg.Prior != want[i] {
			t.Errorf("target %d (%s): prior %q, want %q", i, tg.Key, tg.Prior, want[i])
		}
	}
	if tg := in.Targets[4]; *tg.DumpBytes != 37 || *tg.TTLMs != 60000 || *tg.Size != 4 {
		t.Errorf("dumped target %+v", tg)
	}
	if tg := in.Targets[6]; tg.TTLMs != nil {
		t.Errorf("an absent key has a TTL: %+v", tg)
	}
	if p := in.Targets[2].Part; p.Score != nil || p.ScoreTx != "-inf" || p.Rank != nil {
		t.Errorf("infinite score %+v", p)
	}
	has(t, page, `"args":{"name":{"b64":"ZXZl/w=="}}`, `"score":1200.5`, `"rank":0`, `"offsets":[5,900]`, `"bits":[1,0]`,
		`"ttl_ms":-1`, `"time":"2026-12-01T20:00:00Z"`, `"kind":"smember"`, `"snapshot_type":"list"`, `"actor":{"user":"alice","role":"support"}`)
	hasNot(t, page, `"v1"`, displayStrings[0])
	conforms(t, page)
}

func TestAuditSensitivePriorNeverSent(t *testing.T) {
	r := action.Record{ID: "1-0", Time: t0, Phase: action.PhaseIntent, User: "root", Level: "admin", Action: "delete-key", Conn: "eisland", DB: 5,
		Keys: []string{"totp:security:secret:plain:bob"}, Args: map[string]string{},
		Targets: []action.Target{
			{Key: "totp:security:secret:plain:bob", Type: "string", Sensitive: true, PTTL: -1, Prior: action.PriorSensitive},
			{Key: "h", Type: "hash", Sensitive: true, PTTL: -1, Member: &action.MemberState{Kind: action.PartHField, Name: "f", Present: true, Value: "SECRETVALUE"}},
		}}
	e := AuditEntryOf(r)
	for _, tg := range e.Targets {
		if tg.Prior != PriorSensitive || tg.Part != nil || tg.DumpBytes != nil || !tg.Sensitive {
			t.Errorf("sensitive target %+v", tg)
		}
	}
	hasNot(t, e, "SECRETVALUE", action.PriorSensitive)
	conforms(t, e)
}

func TestAuditEmptyPage(t *testing.T) {
	page := Audit(nil, "")
	has(t, page, `{"entries":{"items":[],"next":null}}`)
	conforms(t, page)
	e := AuditEntryOf(action.Record{ID: "1-0", Time: t0, Phase: action.PhaseOutcome, Outcome: action.OutcomeRefused, Error: "forbidden"})
	has(t, e, `"keys":[]`, `"args":{}`, `"targets":[]`, `"undoable":false`)
	conforms(t, e)
}
