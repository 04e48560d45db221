package action

import (
	"context"
	"fmt"
)

// OwnWrite is a write Keydeck makes to its own records on the audit
// Redis, not to a key of a watched connection, that a person asked for:
// an API token revoked (by an admin, or with a sign-out-everywhere). It
// is recorded as actions are, by the same writer in the same format — an
// intent before, an outcome after — but its records name no connection
// (Conn "") and no key, and no undo applies (Record.Own).
type OwnWrite struct {
	// Kind names what was done, as Record.Action ("revoke-token").
	Kind string
	// Args is what it acted on (an owner, a token's name): never a secret.
	Args map[string]string
	// Summary says it in words; do may say more for the outcome.
	Summary string
}

// RecordOwn records w by actor: its intent, then do, then its outcome (ok
// with the summary do returns, when not "", or failed with do's error,
// which it returns). When the intent cannot be written do is not run
// (ErrAuditUnavailable). The outcome is written even when ctx has ended;
// when it cannot be, the write stands, recorded by its intent, and
// warning says so.
func (r *Runner) RecordOwn(ctx context.Context, actor Actor, w OwnWrite, do func(context.Context) (string, error)) (warning string, err error) {
	if w.Kind == "" {
		return "", invalidf("a write of Keydeck's own needs a kind")
	}
	rec := Record{User: actor.User, Level: actor.Level.String(), Token: actor.Token, TokenOwner: actor.TokenOwner,
		Action: w.Kind, Args: w.Args, Summary: w.Summary}
	intent := rec
	intent.Phase, intent.Time = PhaseIntent, r.opts.Now()
	id, err := r.audit.writeIntent(ctx, intent)
	if err != nil {
		return "", err
	}
	said, err := do(ctx)
	out := rec
	out.Phase, out.Ref, out.Time, out.Outcome = PhaseOutcome, id, r.opts.Now(), OutcomeOK
	switch {
	case err != nil: // what do said it did is not what happened
		out.Outcome, out.Error = OutcomeFailed, err.Error()
	case said != "":
		out.Summary = said
	}
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), auditDeadline)
	defer cancel()
	if _, werr := r.audit.writeOutcome(actx, out, id); werr != nil && err == nil {
		warning = fmt.Sprintf("done, and its intent recorded (%s), but its outcome could not be recorded: %v", id, werr)
	}
	return warning, err
}

// Own reports a record of a write of Keydeck's own (OwnWrite): one that
// names no connection; every action names the connection it acts on.
func (r Record) Own() bool { return r.Conn == "" }
