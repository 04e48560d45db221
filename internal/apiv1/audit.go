package apiv1

import (
	"encoding/base64"
	"strings"
	"time"

	"github.com/keydeck/keydeck/redisview/action"
)

// AuditPage mirrors the audit log page (handlers/audit.go): one page of
// records, newest first, as the audit stream holds them. next is the
// cursor of older records (the page's Before). Meant for
// GET /api/v1/audit?user=U&action=KIND&key=TEXT&since=T&until=T&before=CURSOR.
type AuditPage struct {
	Entries List[AuditEntry] `json:"entries" doc:"Records newest first; next is the cursor of older ones (null: none older)."`
}

// Audit phases and outcomes.
const (
	PhaseIntent  = action.PhaseIntent
	PhaseOutcome = action.PhaseOutcome
)

// AuditEntry is one record of the audit stream: an intent (written before
// a change, with the prior state) or an outcome (after it).
type AuditEntry struct {
	ID       string          `json:"id" doc:"The stream id." example:"1764619200000-0"`
	Time     time.Time       `json:"time"`
	Phase    string          `json:"phase" enum:"intent,outcome" doc:"intent: written before the change, holds the prior state; outcome: after it."`
	Ref      string          `json:"ref,omitempty" doc:"Outcome: the intent it concludes."`
	Actor    AuditActor      `json:"actor" doc:"Who acted, as the record holds it."`
	Action   string          `json:"action" doc:"The action's kind." example:"unban"`
	Conn     string          `json:"conn" doc:"The connection acted on." example:"eisland"`
	DB       int             `json:"db" minimum:"0"`
	Keys     []Name          `json:"keys" nullable:"false" doc:"The keys the action names."`
	Args     map[string]Name `json:"args" nullable:"false" doc:"The action's arguments, byte-exact (a sensitive key's are recorded as a placeholder, never their value)."`
	Summary  string          `json:"summary" doc:"What the action did, as worded when it ran."`
	Outcome  string          `json:"outcome,omitempty" enum:"ok,failed,refused,unknown" doc:"Outcome records only: ok; failed (Redis or a concurrent change stopped it); refused (Keydeck declined before writing); unknown (sent, its reply lost: it may have run)."`
	Error    string          `json:"error,omitempty" doc:"Why it failed or was refused."`
	Undoes   string          `json:"undoes,omitempty" doc:"An undo: the outcome record it reverses."`
	UndoneBy string          `json:"undone_by,omitempty" doc:"A successful outcome an undo has claimed: the undo's intent id, or \"pending\" while it runs."`
	Undoable bool            `json:"undoable" doc:"A successful outcome not undone yet (undo checks the intent's priors itself)."`
	Targets  []AuditTarget   `json:"targets" nullable:"false" doc:"Intent records: each key's state before the change. Empty for outcomes (they hold the state after as fingerprints only)."`
}

// AuditActor is who acted.
type AuditActor struct {
	User string `json:"user" doc:"The person (or token owner) who acted." example:"alice"`
	Role string `json:"role" doc:"Their role when acting (viewer, support or admin)." example:"support"`
}

// Prior kinds: what an intent holds of a key before the change.
const (
	PriorDump        = "dump"
	PriorSnapshot    = "snapshot"
	PriorOfPart      = "part"
	PriorAbsent      = "absent"
	PriorSensitive   = "sensitive"
	PriorNotRecorded = "not_recorded"
)

// AuditTarget is one key of an intent and what was recorded of it.
type AuditTarget struct {
	Key       Name   `json:"key"`
	Type      string `json:"type,omitempty" doc:"The key's Redis type before; absent when not recorded (\"none\": the key did not exist)."`
	Family    string `json:"family,omitempty" doc:"The family's id; absent when none explains the key."`
	Sensitive bool   `json:"sensitive" doc:"The key is of a sensitive family: its prior value was not recorded."`
	Size      *int64 `json:"size,omitempty" minimum:"0" doc:"Elements (or bytes of a string) before; absent when not recorded."`
	Unit      string `json:"unit,omitempty" doc:"What size counts."`
	TTLMs     *int64 `json:"ttl_ms,omitempty" doc:"Time to live before; -1: none; absent when the key did not exist."`
	Prior     string `json:"prior" enum:"dump,snapshot,part,absent,sensitive,not_recorded" doc:"dump: a DUMP of the key (dump_bytes); snapshot: its elements, where the server refused DUMP; part: one member, field or set of bits (part); absent: the key did not exist; sensitive: not recorded."`
	DumpBytes *int64 `json:"dump_bytes,omitempty" minimum:"0" doc:"The DUMP's length; only for dump."`
	// SnapType is the snapshot's type; only for snapshot.
	SnapType string     `json:"snapshot_type,omitempty" enum:"string,hash,list,set,zset" doc:"The snapshot's type; only for snapshot."`
	Part     *PriorPart `json:"part,omitempty" doc:"The member, field or bits before; only for part."`
}

// PriorPart is one member, field or set of bits before a change.
type PriorPart struct {
	Kind    string   `json:"kind" enum:"zmember,smember,hfield,bits" doc:"What the part is: a sorted-set member, a set member, a hash field, bits of a string."`
	Name    Name     `json:"name" doc:"The member or field (empty for bits)."`
	Present bool     `json:"present" doc:"It was there (bits: any was set)."`
	Score   *Decimal `json:"score,omitempty" doc:"Sorted-set member: its exact score; absent when not present or infinite (see score_text)."`
	ScoreTx string   `json:"score_text,omitempty" doc:"Sorted-set member: a score no JSON number holds (inf, -inf)."`
	Value   *Name    `json:"value,omitempty" doc:"Hash field: its value; absent when not recorded (or sensitive)."`
	Rank    *int64   `json:"rank,omitempty" minimum:"0" doc:"Sorted-set member: its 0-based rank then (informative); absent when unknown."`
	Offsets []int64  `json:"offsets,omitempty" doc:"Bits: their offsets."`
	Bits    []int    `json:"bits,omitempty" doc:"Bits: their values (0 or 1), in the order of offsets."`
}

// Audit maps one page of the audit log (action.Runner.ReadAudit): its
// records and the cursor of older ones ("" at the end).
func Audit(recs []action.Record, next string) AuditPage {
	p := AuditPage{Entries: list(make([]AuditEntry, 0, len(recs)))}
	if next != "" {
		p.Entries.Next = ptr(next)
	}
	for _, r := range recs {
		p.Entries.Items = append(p.Entries.Items, AuditEntryOf(r))
	}
	return p
}

// AuditEntryOf maps one audit record.
func AuditEntryOf(r action.Record) AuditEntry {
	e := AuditEntry{ID: r.ID, Time: Time(r.Time), Phase: r.Phase, Ref: r.Ref, Actor: AuditActor{User: r.User, Role: r.Level},
		Action: r.Action, Conn: r.Conn, DB: r.DB, Keys: names(r.Keys), Args: make(map[string]Name, len(r.Args)), Summary: r.Summary,
		Outcome: r.Outcome, Error: r.Error, Undoes: r.Undoes, UndoneBy: r.UndoneBy, Undoable: r.Undoable(), Targets: []AuditTarget{}}
	for k, v := range r.Args {
		e.Args[k] = Name(v)
	}
	if r.Phase == action.PhaseIntent {
		for _, t := range r.Targets {
			e.Targets = append(e.Targets, auditTarget(t))
		}
	}
	return e
}

func auditTarget(t action.Target) AuditTarget {
	v := AuditTarget{Key: Name(t.Key), Type: t.Type, Family: t.Family, Sensitive: t.Sensitive, Unit: t.Unit,
		Size: optional(t.Size, t.Size > 0), TTLMs: optional(t.PTTL, t.PTTL >= -1)}
	if v.TTLMs != nil && *v.TTLMs < 0 {
		*v.TTLMs = -1
	}
	switch {
	case t.Sensitive || t.Prior == action.PriorSensitive:
		v.Prior, v.Sensitive = PriorSensitive, true
	case t.Member != nil:
		v.Prior, v.Part = PriorOfPart, priorPart(*t.Member)
	case t.Snapshot != nil:
		v.Prior, v.SnapType = PriorSnapshot, t.Snapshot.Type
	case t.Prior != "":
		v.Prior, v.DumpBytes = PriorDump, ptr(dumpLen(t.Prior))
	case t.Type == "none" || t.PTTL == -2:
		v.Prior = PriorAbsent
	default:
		v.Prior = PriorNotRecorded
	}
	return v
}

var partKinds = map[string]string{action.PartZMember: "zmember", action.PartSMember: "smember", action.PartHField: "hfield", action.PartBits: "bits"}

func priorPart(m action.MemberState) *PriorPart {
	p := &PriorPart{Kind: partKinds[m.Kind], Name: Name(m.Name), Present: m.Present, Offsets: m.Offsets}
	switch m.Kind {
	case action.PartZMember:
		if m.Present {
			if p.Score = decimal(m.Score); p.Score == nil {
				p.ScoreTx = strings.ToLower(strings.TrimPrefix(m.Score, "+"))
			}
		}
		if m.Rank >= 0 {
			p.Rank = ptr(m.Rank)
		}
	case action.PartHField:
		if m.Present && m.Value != "" {
			p.Value = ptr(Name(m.Value))
		}
	case action.PartBits:
		p.Name = ""
		for _, c := range m.Bits {
			p.Bits = append(p.Bits, int(c-'0'))
		}
	}
	return p
}

// dumpLen is the length of a base64-encoded DUMP payload.
func dumpLen(b64 string) int64 {
	pad := len(b64) - len(strings.TrimRight(b64, "="))
	return int64(base64.StdEncoding.DecodedLen(len(b64)) - pad)
}
