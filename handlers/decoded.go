package handlers

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/decode"
	"github.com/keydeck/keydeck/redisview/schema"
	"github.com/keydeck/keydeck/views"
	"github.com/keydeck/keydeck/views/format"
)

// keyDecoded reads what a key of family m means by its role, at now. A
// role without a decoder shows nothing; a sensitive family says it was not
// decoded, without a read; a key of the wrong type is not decoded.
func keyDecoded(ctx context.Context, conn *redisview.Conn, db int, key, typ string, m schema.Match, now time.Time) views.DecodedVM {
	f := m.Family
	if f == nil || !decode.Supported(f.Role) {
		return views.DecodedVM{}
	}
	vm := views.DecodedVM{Role: string(f.Role)}
	if f.Sensitive {
		vm.Withheld = true
		return vm
	}
	if v := f.TypeViolation(typ); v != "" {
		vm.Note = "Not decoded: " + v + "."
		return vm
	}
	res, err := decode.Decode(ctx, conn.DB(db), m, key, now)
	switch {
	case err != nil:
		vm.Note = "Could not be decoded: " + conn.WrapErr(redisview.ReadError("reading the key by its role", err)).Error()
		return vm
	case res.Sensitive:
		vm.Withheld = true
		return vm
	case res.Note != "":
		vm.Note = "Not decoded: " + res.Note + "."
		return vm
	}
	row := func(label, value string) { vm.Rows = append(vm.Rows, views.DecodedRow{Label: label, Value: value}) }
	switch {
	case res.TokenBucket != nil:
		tb := res.TokenBucket
		vm.Summary = fmt.Sprintf("%s of %s tokens now", tokens(tb.Tokens), tokens(tb.Capacity))
		row("Tokens now", tokens(tb.Tokens))
		row("Read at", format.Clock(tb.Now))
		row("Capacity", tokens(tb.Capacity))
		refill := strconv.FormatFloat(tb.RefillPerS, 'g', 4, 64) + " tokens a second"
		if tb.RefillPerS > 0 {
			refill += " (empty to full in " + format.Duration(time.Duration(tb.Capacity/tb.RefillPerS*float64(time.Second))) + ")"
		}
		row("Refill", refill)
		if tb.LastRefill.IsZero() {
			row("Last refill", "unknown (no time field)")
		} else {
			row("Last refill", format.Time(tb.LastRefill)+ago(tb.Now.Sub(tb.LastRefill)))
		}
		row("Stored tokens", tokens(tb.Stored))
		if tb.ToFull > 0 {
			row("Full in", format.Duration(tb.ToFull))
		} else {
			row("Full in", "full now")
		}
		if tb.Refused {
			vm.Alert = fmt.Sprintf("A request now is refused: it takes %s, %s left.", tokens(tb.Requested), tokens(tb.Tokens))
			if tb.RetryAfter > 0 {
				vm.Alert += " Retry after " + format.Duration(tb.RetryAfter) + "."
			}
			row("A request now", "refused")
		} else {
			row("A request now", "allowed (takes "+tokens(tb.Requested)+")")
		}
	case res.CounterWindow != nil:
		cw := res.CounterWindow
		per := format.Duration(cw.Window)
		if cw.Calendar != "" {
			per = cw.Calendar + " (" + cw.Zone + ")"
		}
		vm.Summary = fmt.Sprintf("%s of %s in this window", format.Count(cw.Count), format.Count(cw.Limit))
		row("Count", format.Count(cw.Count))
		row("Limit", format.Count(cw.Limit))
		row("Window", per)
		if cw.ResetsIn >= 0 {
			row("Resets in", format.Duration(cw.ResetsIn))
		} else {
			row("Resets in", "never: no TTL")
		}
		if cw.Reached {
			vm.Alert = "Limit reached: further requests are refused until the window resets."
		}
	case res.SlidingWindow != nil:
		sw := res.SlidingWindow
		vm.Summary = fmt.Sprintf("%s of %s in the last %s", format.Count(sw.InWindow), format.Count(sw.Limit), format.Duration(sw.Window))
		row("In the window", format.Count(sw.InWindow))
		row("Limit", format.Count(sw.Limit))
		row("Window", format.Duration(sw.Window))
		if sw.InWindow > 0 {
			row("Oldest", format.Time(sw.Oldest))
			row("Newest", format.Time(sw.Newest))
		}
		row("Older entries", format.Count(sw.Total-sw.InWindow))
		if sw.LockKey != "" {
			if sw.Locked {
				row("Lock", "locked")
				vm.Alert = "Locked: the lock " + views.EscapeName(sw.LockKey) + " is set."
			} else {
				row("Lock", "not locked")
			}
		}
		if sw.Reached && vm.Alert == "" {
			vm.Alert = "Limit reached inside the window."
		}
	case res.Lock != nil:
		l := res.Lock
		holder := views.EscapeName(l.Holder)
		if !l.Until.IsZero() {
			vm.Summary = "Locked until " + format.Time(l.Until)
			row("Unlocks at", format.Time(l.Until))
			if d := l.Until.Sub(now); d > 0 {
				row("Unlocks in", format.Duration(d))
			} else {
				row("Unlocks in", "past (it is still set)")
			}
		} else {
			vm.Summary = "Held by " + holder
		}
		row("Holder value", holder)
		row("TTL left", format.TTL(l.TTL))
		if !l.Expected {
			row("Shape", "not the "+l.Kind+" value the pack says")
		}
	case res.Quota != nil:
		q := res.Quota
		unit := ""
		if q.Unit != "" {
			unit = " " + q.Unit
		}
		if q.Limit > 0 {
			vm.Summary = fmt.Sprintf("%s / %s%s this %s (%s)", format.Count(q.Used), format.Count(q.Limit), unit, q.Period, format.Percent(q.Percent/100, 1))
		} else {
			vm.Summary = fmt.Sprintf("%s%s this %s", format.Count(q.Used), unit, q.Period)
		}
		row("Used", format.Count(q.Used)+unit)
		if q.Limit > 0 {
			row("Limit", format.Count(q.Limit)+unit)
			row("Used share", format.Percent(q.Percent/100, 1))
		} else {
			row("Limit", "not in the pack (set per subject elsewhere)")
		}
		row("Period", q.Period)
		row("Resets at", format.Time(q.ResetsAt))
		row("TTL", format.TTL(q.TTL))
		if q.Reached {
			vm.Alert = "Quota used up: further use is refused until " + format.Time(q.ResetsAt) + "."
		}
	case res.Balance != nil:
		b := res.Balance
		unit := ""
		if b.Unit != "" {
			unit = " " + b.Unit
		}
		amount := views.EscapeName(b.Amount)
		vm.Summary = amount + unit
		row("Amount", amount+unit)
		row("Decimal places", strconv.Itoa(b.Scale)+" (as the pack says the application writes)")
		row("TTL", format.TTL(b.TTL))
	case res.Bucket4j != nil:
		b := res.Bucket4j
		capacity := int64(0)
		for _, bw := range b.Bandwidths {
			if capacity == 0 || bw.Capacity < capacity {
				capacity = bw.Capacity
			}
		}
		vm.Summary = fmt.Sprintf("%s of %s tokens now", format.Count(b.Tokens), format.Count(capacity))
		row("Tokens now", format.Count(b.Tokens))
		row("Read at", format.Clock(b.Now))
		if b.ToFull > 0 {
			row("Full in", format.Duration(b.ToFull))
		} else {
			row("Full in", "full now")
		}
		row("Consumed (total)", format.Count(b.Consumed))
		row("TTL", format.TTL(b.TTL))
		if b.HasVersion {
			row("Configuration version", strconv.FormatInt(b.Version, 10))
		}
		for i, bw := range b.Bandwidths {
			name := "Bandwidth " + strconv.Itoa(i+1)
			if bw.ID != "" {
				name += " (" + views.EscapeName(bw.ID) + ")"
			}
			kind := "greedy"
			if bw.Intervally {
				kind = "intervally"
			}
			row(name, fmt.Sprintf("%s of %s; refill %s per %s, %s; last refill %s", format.Count(bw.Tokens), format.Count(bw.Capacity),
				format.Count(bw.RefillTokens), format.Duration(bw.RefillPeriod), kind, format.Time(bw.LastRefill)))
		}
		if b.Tokens <= 0 {
			vm.Alert = "No tokens now: a request is refused until the bucket refills."
		}
		if b.ClockSkew {
			vm.Alert = strings.TrimSpace(vm.Alert + " A last refill is more than a day from now: the writer may use a custom clock, so the refill shown may be wrong.")
		}
	}
	return vm
}

// tokens shows a token count to two decimals at most, rounded down.
func tokens(f float64) string {
	return strconv.FormatFloat(math.Floor(f*100)/100, 'f', -1, 64)
}

func ago(d time.Duration) string {
	if d < 0 {
		return " (in the future: clock skew)"
	}
	return " (" + format.Duration(d) + " ago)"
}
