package apiv1

import (
	"time"

	"github.com/keydeck/keydeck/redisview/action"
)

// ActionRequest names an action and its target, for a preview. Key and
// the arguments are names: byte-exact, never trimmed.
type ActionRequest struct {
	Kind string          `json:"kind" doc:"The action kind (unban, unlock-login, reset-limit, ban, delete-key, …)."`
	Conn string          `json:"conn"`
	DB   int             `json:"db" minimum:"0" maximum:"255"`
	Key  Name            `json:"key,omitempty" doc:"The key it acts on; for ban and unban, the list's set key (set_key of a ban-check); absent for undo."`
	Args map[string]Name `json:"args,omitempty" doc:"The kind's arguments (name for ban and unban, member, ttl …)."`
}

// UndoRequest names an executed action to undo: its audit record.
type UndoRequest struct {
	Conn   string `json:"conn"`
	DB     int    `json:"db" minimum:"0" maximum:"255"`
	Record string `json:"record" doc:"The audit record id an execute answered (audit_id)."`
}

// ExecuteRequest confirms a preview.
type ExecuteRequest struct {
	Token string `json:"token" doc:"The preview's confirmation token."`
}

// ActionPreview is exactly what an action will do, and the token that
// confirms it. Nothing is written before execute; execute refuses when a
// key changed since the preview (409).
type ActionPreview struct {
	Kind     string         `json:"kind"`
	Title    string         `json:"title"`
	Summary  string         `json:"summary"`
	Changes  []ActionChange `json:"changes"`
	Undoable bool           `json:"undoable" doc:"The prior state will be recorded, so the action can be undone."`
	Notes    []string       `json:"notes"`
	Made     time.Time      `json:"made" doc:"When the preview was made."`
	Token    string         `json:"token" doc:"Give it to POST /api/v1/actions/execute to confirm; it executes once."`
}

// ActionChange is one key an action changes.
type ActionChange struct {
	Key   Name   `json:"key"`
	Op    string `json:"op" doc:"delete, expire, persist, restore, remove-member, add-member, set-bits, …; none: read and watched, left as is."`
	Text  string `json:"text"`
	After string `json:"after" doc:"The key afterwards."`
}

// ActionOutcome is what an executed action did, and how to undo it.
type ActionOutcome struct {
	Kind     string         `json:"kind"`
	Summary  string         `json:"summary"`
	Changes  []ActionChange `json:"changes"`
	AuditID  string         `json:"audit_id" doc:"The audit record of the change; undo takes it."`
	Undoable bool           `json:"undoable"`
	Undo     *UndoRequest   `json:"undo" doc:"The body of POST /api/v1/actions/undo that previews undoing it; null when it cannot be undone."`
	Warning  string         `json:"warning,omitempty" doc:"The change happened but its audit record could not be completed."`
}

// PreviewOf maps a preview and its sealed token.
func PreviewOf(pv action.Preview, token string) ActionPreview {
	notes := pv.Notes
	if notes == nil {
		notes = []string{}
	}
	if pv.UndoNote != "" {
		// An action that cannot be undone says so first (a killed client).
		notes = append([]string{pv.UndoNote}, notes...)
	}
	return ActionPreview{Kind: pv.Kind, Title: pv.Title, Summary: pv.Summary, Changes: changesOf(pv.Changes),
		Undoable: pv.Undoable, Notes: notes, Made: Time(pv.Made), Token: token}
}

// OutcomeOf maps what Execute did.
func OutcomeOf(out action.Outcome) ActionOutcome {
	o := ActionOutcome{Kind: out.Kind, Summary: out.Summary, Changes: changesOf(out.Changes), AuditID: out.ID, Undoable: out.Undoable, Warning: out.AuditWarning}
	if out.Undoable && out.ID != "" {
		o.Undo = &UndoRequest{Conn: out.Request.Conn, DB: out.Request.DB, Record: out.ID}
	}
	return o
}

func changesOf(chs []action.Change) []ActionChange {
	out := make([]ActionChange, 0, len(chs))
	for _, ch := range chs {
		out = append(out, ActionChange{Key: Name(ch.Key), Op: ch.Op, Text: ch.Text, After: ch.After})
	}
	return out
}

// Request is r as the runner takes it.
func (r ActionRequest) Request() action.Request {
	args := make(map[string]string, len(r.Args))
	for k, v := range r.Args {
		args[k] = string(v)
	}
	return action.Request{Conn: r.Conn, DB: r.DB, Key: string(r.Key), Args: args}
}
