package handlers

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/keydeck/keydeck/internal/live"
	"github.com/keydeck/keydeck/internal/route"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/action"
	"github.com/keydeck/keydeck/redisview/quotas"
	"github.com/keydeck/keydeck/redisview/schema"
	"github.com/keydeck/keydeck/views"
	"github.com/keydeck/keydeck/views/format"
)

// gatewayKeyPage shows one API key's state: its rps bucket, this and last
// period's budget, its reservations and in-flight requests, and the
// breaker hints; live.
//
// An id with no key in Redis is a 200 with an empty state, not a 404: the
// id is a question about Redis, not a resource of it. A gateway writes a
// key's keys only while it is used and they expire (q:rps in 2 minutes,
// q:conc in 5), so a valid, paying customer's id has no keys most of the
// time, and "nothing in Redis for it now" is the answer support needs. An
// id that cannot be a key id of the pack's patterns is a 400; a connection
// whose pack has no API key families is a 404.
func (a *App) gatewayKeyPage(c echo.Context) error {
	conn, err := a.conns.Get(c.Param("conn"))
	if err != nil {
		return err
	}
	id := c.QueryParam("id")
	if _, err := quotas.SubjectOf(conn.Pack()); err != nil {
		return fmt.Errorf("%w: %s on connection %s", route.ErrNoPage, err.Error(), conn.Name)
	}
	vm := views.GatewayKeyVM{Conn: conn.Name, ID: id, FormURL: route.GatewayKeyPath(conn.Name), QuotasURL: route.QuotasURL(conn.Name)}
	if id == "" {
		vm.Empty = "Enter an API key id to see its state."
		return render(c, http.StatusOK, vm, views.GatewayKeyPage(a.page(c, "Gateway key · "+conn.Name, conn.Name), vm))
	}
	if err := checkKeyID(id); err != nil {
		return err
	}
	w, release := a.quotaWalkers.Acquire(conn)
	defer release()
	ctx := c.Request().Context()
	if s := conn.Status(); s.Up || s.Checked.IsZero() {
		w.WaitRead(ctx, firstRead) // for the breaker hints
	}
	st, err := quotas.ReadSubject(ctx, conn, id, a.now())
	if errors.Is(err, quotas.ErrBadID) {
		return fmt.Errorf("%w: key id: %v", route.ErrParam, err)
	}
	vm = a.gatewayKeyVM(conn, id, st, err, w.Snapshot())
	return render(c, http.StatusOK, vm, views.GatewayKeyPage(a.page(c, "Gateway key · "+conn.Name, conn.Name), vm))
}

func checkKeyID(id string) error {
	if len(id) > quotas.MaxSubjectID {
		return fmt.Errorf("%w: key id of %d bytes: at most %d", route.ErrParam, len(id), quotas.MaxSubjectID)
	}
	return nil
}

const gatewayKeyKind = "gwkey"

// GatewayKeyTopic is one API key's live state: "gwkey:conn=NAME&id=ID".
type GatewayKeyTopic struct{ Conn, ID string }

func (t GatewayKeyTopic) String() string {
	return gatewayKeyKind + ":" + url.Values{"conn": {t.Conn}, "id": {t.ID}}.Encode()
}
func (GatewayKeyTopic) Level() action.Level { return action.Viewer }

func parseGatewayKeyTopic(arg string) (Topic, error) {
	q, err := url.ParseQuery(arg)
	if err != nil {
		return nil, err
	}
	t := GatewayKeyTopic{Conn: q.Get("conn"), ID: q.Get("id")}
	if !redisview.ValidName(t.Conn) || t.ID == "" || checkKeyID(t.ID) != nil {
		return nil, ErrUnknownTopic
	}
	return t, nil
}

func (t GatewayKeyTopic) source(a *App) (func() live.Source, error) {
	conn, err := a.conns.Get(t.Conn)
	if err != nil {
		return nil, err
	}
	if _, err := quotas.SubjectOf(conn.Pack()); err != nil {
		return nil, fmt.Errorf("%w %q: %w", ErrUnknownTopic, t.String(), err)
	}
	return func() live.Source {
		w, release := a.quotaWalkers.Acquire(conn)
		return &walkerSource{release: release, poll: func(ctx context.Context) ([]byte, error) {
			st, err := quotas.ReadSubject(ctx, conn, t.ID, a.now())
			return renderBytes(ctx, views.GatewayKeyLive(a.gatewayKeyVM(conn, t.ID, st, err, w.Snapshot()), true))
		}}
	}, nil
}

func (a *App) gatewayKeyVM(conn *redisview.Conn, id string, st quotas.SubjectState, err error, snap quotas.Snapshot) views.GatewayKeyVM {
	vm := views.GatewayKeyVM{Conn: conn.Name, ID: id, FormURL: route.GatewayKeyPath(conn.Name), QuotasURL: route.QuotasURL(conn.Name),
		WSURL: route.LiveURL(GatewayKeyTopic{Conn: conn.Name, ID: id}.String())}
	if s := conn.Status(); !s.Up && !s.Checked.IsZero() {
		vm.Err = "Redis is unreachable — " + statusText(s) + ": nothing is known about this key."
		return vm
	}
	if err != nil {
		vm.Err = "Cannot read the key's state: " + conn.SafeErr(err)
		return vm
	}
	vm.Read = format.Clock(st.Read)
	sub := st.Subject
	if !st.Any() {
		vm.Empty = "No keys for this id: no rps bucket, budget or in-flight request exists in Redis for it now. The gateway writes them while the key is used, and they expire (an unknown id looks the same)."
	}
	if sub.Bucket != nil {
		vm.Bucket = gkBucketVM(conn.Name, st)
	}
	vm.Budgets = gkBudgetVMs(conn.Name, st)
	vm.InFlight = gkInFlightVM(conn.Name, st)
	vm.Reservations = gkReservationVMs(conn.Name, st)
	vm.Hints, vm.HintsNote = gkHints(conn.Name, sub, snap)
	return vm
}

// gkBucketVM is the key's rps bucket: its tokens, refill and TTL, or, with
// no bucket in Redis, the full bucket a first request would find.
func gkBucketVM(conn string, st quotas.SubjectState) *views.GKBucketVM {
	sub := st.Subject
	b := views.GKBucketVM{Key: st.BucketKey, Href: keyHref(conn, sub.DB, st.BucketKey), Exists: st.BucketExists, Note: st.BucketNote}
	p, _ := sub.Bucket.Params.(*schema.TokenBucketParams)
	if p != nil {
		b.Capacity = tokens(p.Capacity)
		b.Refill = tokens(p.RefillPerSec) + " per second"
	}
	if st.BucketExists && st.BucketNote == "" {
		tb := st.Bucket
		b.Tokens = tokens(tb.Tokens)
		if tb.Capacity > 0 {
			b.Left = views.LeftPct(tb.Tokens, tb.Capacity)
		}
		b.TTL = format.TTL(st.BucketTTL)
		if tb.ToFull > 0 {
			b.ToFull = format.Duration(tb.ToFull)
		} else {
			b.ToFull = "full now"
		}
		if tb.Refused {
			b.Refused = "Throttled: the next request is refused; enough tokens in " + format.Duration(tb.RetryAfter) + "."
		}
	} else if !st.BucketExists && p != nil {
		b.Tokens, b.Left, b.ToFull = tokens(p.Capacity), 100, "full (no bucket: the key has not been used within its TTL)"
	}
	return &b
}

// gkBudgetVMs is the key's budget of each period shown (this and last).
func gkBudgetVMs(conn string, st quotas.SubjectState) []views.GKBudgetVM {
	sub := st.Subject
	var out []views.GKBudgetVM
	for _, per := range st.Budgets {
		r := per.Row
		bv := views.GKBudgetVM{Label: per.Label, Period: per.Value, Key: r.Key, Href: keyHref(conn, sub.DB, r.Key), Exists: !r.Gone, Note: r.Note}
		p, _ := sub.Budget.Params.(*schema.QuotaParams)
		switch {
		case p != nil && p.Limit > 0:
			bv.Limit = format.Count(p.Limit)
		default:
			bv.Limit = "limit not in Redis (the pack says the budget is held outside it)"
		}
		if !r.Gone && r.Note == "" {
			bv.Used = format.Count(r.Used) + " " + r.Unit
			bv.TTL = format.TTL(r.TTL)
			if r.Limit > 0 {
				bv.Percent = strconv.FormatFloat(r.Percent, 'f', 1, 64) + "%"
			}
		}
		out = append(out, bv)
	}
	return out
}

// gkInFlightVM is the key's concurrency set: requests in flight and its cap.
func gkInFlightVM(conn string, st quotas.SubjectState) views.GKInFlightVM {
	cs := st.Concurrency
	f := views.GKInFlightVM{Key: cs.Key, Href: keyHref(conn, st.Subject.DB, cs.Key), Exists: !cs.Gone, Note: cs.Note}
	if cs.Gone || cs.Note != "" {
		f.Count = "0"
		return f
	}
	f.Count = format.Count(cs.Used)
	f.TTL = format.TTL(cs.TTL)
	if cs.Limit > 0 {
		f.Limit = format.Count(cs.Limit)
	} else {
		f.Limit = "not in Redis (a deployment setting)"
	}
	if cs.MoreMems {
		f.More = "First " + strconv.Itoa(cs.Checked) + " of " + format.Count(cs.Used) + " requests read."
	}
	return f
}

// gkReservationVMs is the reservation of each request in flight.
func gkReservationVMs(conn string, st quotas.SubjectState) []views.GKReservationVM {
	var out []views.GKReservationVM
	for i, r := range st.Reservations {
		rv := views.GKReservationVM{Request: st.Members[i], Key: r.Key, Gone: r.Gone}
		if !r.Gone {
			rv.Href = keyHref(conn, st.Subject.DB, r.Key)
			rv.TTL = format.TTL(r.TTL)
			rv.NoTTL = r.NoTTL
			if r.Note != "" {
				rv.Amount = r.Note
			} else {
				rv.Amount = views.EscapeName(r.Amount) + " " + r.Unit
			}
			if r.Age > 0 {
				rv.Age = format.Duration(r.Age)
			}
		}
		out = append(out, rv)
	}
	return out
}

// gkHints is every current breaker hint, from the connection's walk: the
// gateway keeps no key → route mapping in Redis.
func gkHints(conn string, sub quotas.Subject, snap quotas.Snapshot) ([]views.QuotaRowVM, string) {
	var rows []views.QuotaRowVM
	hints := false
	for _, fr := range snap.Families {
		if fr.Family.Role != schema.RoleBreakerHint {
			continue
		}
		hints = true
		for _, r := range fr.Rows {
			rows = append(rows, quotaRowVM(conn, sub, r))
		}
	}
	switch {
	case !snap.Started:
		return rows, "Breaker hints: not known yet (the connection's walk has not read anything)."
	case !hints && snap.Pass == 0:
		return rows, "No breaker hint found yet: the connection's first walk is running."
	case !hints:
		return rows, "No breaker hint exists."
	}
	return rows, "Which routes this key uses is not kept in Redis, so every current hint is shown."
}
