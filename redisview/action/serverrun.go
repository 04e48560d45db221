package action

import (
	"context"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/redisview"
)

// previewServer reads the server's state and says what the action would
// do to it. It writes nothing and records nothing.
func (r *Runner) previewServer(ctx context.Context, k Kind, conn *redisview.Conn, req Request, p serverPlanned) (Preview, error) {
	c, addr, err := p.server(ctx, conn)
	if err != nil {
		return Preview{}, err
	}
	s, err := p.read(ctx, c)
	if err != nil {
		return Preview{}, err
	}
	ch, err := p.sp.Describe(s)
	if err != nil {
		return Preview{}, err
	}
	pv := Preview{Kind: k.Name(), Title: k.Title(), Request: req, Changes: []Change{ch}, Summary: ch.Text,
		Made: r.opts.Now(), Nonce: newNonce(), Fingerprints: []string{r.serverFP(addr, s)},
		Server: &ServerTarget{Node: addr, Target: s.Target}}
	pv.Undoable = undoKind(k, p) != ""
	if !pv.Undoable {
		// Said before anything else: the person must know it is final.
		pv.UndoNote = fmt.Sprintf("%s cannot be undone: what it changes is not something Keydeck can put back.", k.Title())
		if u, ok := k.(interface{ NotUndoable() string }); ok {
			pv.UndoNote = u.NotUndoable()
		}
	}
	pv.Notes = append(pv.Notes, p.Notes()...)
	return pv, nil
}

// executeServer runs a confirmed server action: the state read again and
// compared with the preview's, the confirmation claimed, the intent
// recorded with the prior state, the change made once, the outcome
// recorded with the state it left.
func (r *Runner) executeServer(ctx context.Context, k Kind, conn *redisview.Conn, pv Preview, p serverPlanned, rec Record, out Outcome) (Outcome, error) {
	rec.Undoes = p.undo
	rec.Server = &ServerTarget{Node: p.node, Kind: undoKind(k, p)}
	err := r.checkPreview(pv, 1)
	if err == nil {
		// Claimed before anything else, as for keys: a confirmation runs
		// at most once (preview again to repeat it).
		err = r.audit.claimConfirmation(ctx, pv.Nonce, r.opts.PreviewTTL+clockSkew)
		if errors.Is(err, ErrAuditUnavailable) {
			r.tally.add(k.Name(), OutcomeFailed)
			return out, err
		}
	}
	var c redis.UniversalClient
	var s ServerState
	if err == nil {
		c, rec.Server.Node, err = p.server(ctx, conn)
		if err == nil {
			s, err = p.read(ctx, c)
			rec.Server.Target = s.Target
		}
		if errors.Is(err, ErrRedis) {
			// Nothing was written (the server not found, or its state
			// not read): this confirmation may be made again.
			r.audit.releaseConfirmation(ctx, pv.Nonce)
		}
	}
	if err == nil && r.serverFP(rec.Server.Node, s) != pv.Fingerprints[0] {
		err = serverChanged{fmt.Sprintf("%s: %s is now %s; nothing was changed, preview again", ErrServerChanged, s.Target, serverShape(s))}
	}
	var ch Change
	if err == nil {
		ch, err = p.sp.Describe(s)
	}
	if err != nil {
		r.settle(ctx, &out, rec, "", err)
		return out, err
	}
	out.Changes, out.Summary, out.Undoable = []Change{ch}, ch.Text, rec.Server.Kind != ""
	rec.Summary = ch.Text
	intent := rec
	intent.Phase, intent.Time = PhaseIntent, r.opts.Now()
	prior := *rec.Server
	prior.Prior, prior.Absent = exact(s.Value), s.Absent
	intent.Server = &prior
	if out.IntentID, err = r.audit.writeIntent(ctx, intent); err != nil {
		if errors.Is(err, ErrAuditUnavailable) {
			r.tally.add(k.Name(), OutcomeFailed)
			return out, err
		}
		r.settle(ctx, &out, rec, "", err)
		return out, err
	}
	if r.opts.beforeExec != nil {
		r.opts.beforeExec()
	}
	after, err := p.sp.Apply(ctx, c, s)
	switch {
	case err == nil, isOurs(err):
	case !isServerReply(err) && Sent(err):
		// Its reply lost: it may have run, and is not sent again.
		err = MayHaveRun("changing "+s.Target, err)
	default:
		err = redisErr("changing the server", err)
	}
	if err == nil {
		done := *rec.Server
		done.After, done.Absent = exact(after.Value), after.Absent
		rec.Server = &done
	}
	r.settle(ctx, &out, rec, out.IntentID, err)
	return out, err
}

// serverShape says a state in words, for a refusal.
func serverShape(s ServerState) string {
	if s.Absent {
		return "gone"
	}
	return fmt.Sprintf("%q", s.Value)
}

// planServerUndo plans undoing a server action's record rec (intent its
// intent record) with the kind that wrote it (ServerUndoer).
func (u Undo) planServerUndo(env Env, id string, rec, intent Record) (Plan, error) {
	if rec.Server == nil || intent.Server == nil {
		return nil, u.refuse(id, "its record does not say what the server's state was")
	}
	t := *rec.Server
	t.Prior, t.Absent = intent.Server.Prior, intent.Server.Absent
	if t.Kind == "" {
		return nil, u.refuse(id, fmt.Sprintf("%s cannot be undone: what it changed is not something Keydeck can put back", rec.Action))
	}
	var k Kind
	ok := env.kindOf != nil
	if ok {
		k, ok = env.kindOf(t.Kind)
	}
	su, isUndoer := k.(ServerUndoer)
	if !ok || !isUndoer {
		return nil, u.refuse(id, fmt.Sprintf("the action kind %q that would write it back is not available here", t.Kind))
	}
	sp, err := su.UndoServer(t)
	if err != nil {
		return nil, err
	}
	return serverPlanned{node: t.Node, sp: sp, undo: id, kindOf: t.Kind}, nil
}
