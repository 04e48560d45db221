package action

import (
	"context"
	"errors"
	"testing"

	"github.com/redis/go-redis/v9"
)

// A write of Keydeck's own is recorded by the actions' writer: an intent,
// then its outcome (ok with do's summary, or failed with do's error); it
// is not run when its intent cannot be recorded, and no undo applies.
func TestRecordOwnWrite(t *testing.T) {
	f := setup(t, Options{})
	w := OwnWrite{Kind: "revoke-token", Args: map[string]string{"owner": "sam", "name": "ci"}, Summary: "revoke API token \"ci\" of sam"}
	ran := 0
	if _, err := f.r.RecordOwn(f.ctx, admin, w, func(context.Context) (string, error) { ran++; return "revoked", nil }); err != nil || ran != 1 {
		t.Fatalf("RecordOwn: %v, ran %d", err, ran)
	}
	out := f.last()
	intent, err := f.r.Audit().Get(f.ctx, out.Ref)
	if err != nil || intent.Phase != PhaseIntent || intent.Summary != w.Summary || intent.Args["owner"] != "sam" || intent.User != "ada" {
		t.Fatalf("intent %+v %v", intent, err)
	}
	if out.Phase != PhaseOutcome || out.Outcome != OutcomeOK || out.Summary != "revoked" || !out.Own() || out.Undoable() {
		t.Fatalf("outcome %+v: want ok, own, not undoable", out)
	}
	if _, err = f.r.Preview(f.ctx, admin, f.conn, "undo", UndoRequest(out)); err == nil {
		t.Fatal("an undo of a write of Keydeck's own was previewed")
	}
	req := UndoRequest(out)
	req.Conn = f.conn.Name // asked through a connection
	_, err = f.r.Preview(f.ctx, admin, f.conn, "undo", req)
	wantErr(t, err, ErrNotUndoable, "no undo restores")

	failed := errors.New("store down")
	if _, err := f.r.RecordOwn(f.ctx, admin, w, func(context.Context) (string, error) { return "revoked the 0 API tokens", failed }); !errors.Is(err, failed) {
		t.Fatalf("do's error: %v", err)
	}
	// A failed write keeps the summary of what was asked: what do said it
	// did did not happen.
	if last := f.last(); last.Outcome != OutcomeFailed || last.Error != "store down" || last.Summary != w.Summary {
		t.Fatalf("failed outcome %+v", last)
	}

	down := New(redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1}), Options{})
	ran = 0
	_, err = down.RecordOwn(f.ctx, admin, w, func(context.Context) (string, error) { ran++; return "", nil })
	if !errors.Is(err, ErrAuditUnavailable) || ran != 0 {
		t.Fatalf("audit down: %v, ran %d; want ErrAuditUnavailable and not run", err, ran)
	}
}
