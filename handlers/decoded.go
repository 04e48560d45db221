package handlers

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/keydeck/keydeck/internal/route"
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
	// A sensitive family is withheld whatever its role, with no read and
	// an empty summary, so a list showing summaries shows nothing of it.
	if vm, read := decodeRead(m, typ); !read {
		return vm
	}
	res, err := decode.DecodeIn(ctx, conn.DB(db), decode.Env{Pack: conn.Pack(), DB: db}, m, key, now)
	return decodedVM(conn, db, key, m, res, err, now)
}

// decodeRead reports whether keyDecoded would read the key (a decoder
// applies); if not, vm is what it shows without a read.
func decodeRead(m schema.Match, typ string) (vm views.DecodedVM, read bool) {
	f := m.Family
	switch {
	case f == nil:
		return views.DecodedVM{}, false
	case f.Sensitive:
		return views.DecodedVM{Role: string(f.Role), Withheld: true}, false
	case !decode.Supported(f.Role):
		return views.DecodedVM{}, false
	}
	if v := f.TypeViolation(typ); v != "" {
		return views.DecodedVM{Role: string(f.Role), Note: "Not decoded: " + v + "."}, false
	}
	return views.DecodedVM{}, true
}

// decodedVM converts what decode read of a key of family m.
func decodedVM(conn *redisview.Conn, db int, key string, m schema.Match, res decode.Result, err error, now time.Time) views.DecodedVM {
	f := m.Family
	vm := views.DecodedVM{Role: string(f.Role)}
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
	link := func(label, value, href string) {
		vm.Rows = append(vm.Rows, views.DecodedRow{Label: label, Value: value, Href: href})
	}
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
	case res.Reservation != nil:
		r := res.Reservation
		amount := views.EscapeName(r.Amount) + unitSuffix(r.Unit)
		row("Reserved", amount)
		if r.NoTTL {
			vm.Summary = amount + " reserved, no TTL"
			row("TTL left", "none")
			vm.Alert = "No TTL: a reservation must expire. If its request died before reconciliation, this amount stays held for ever."
		} else {
			vm.Summary = amount + " reserved, " + format.Duration(r.TTL) + " left"
			row("TTL left", format.TTL(r.TTL))
			row("Expires at", format.Time(now.Add(r.TTL)))
		}
		if r.MaxTTL > 0 {
			row("Age", "about "+format.Duration(r.Age)+" (if written with the pack's "+format.Duration(r.MaxTTL)+" TTL)")
		} else {
			row("Age", "not known (no TTL to count from)")
		}
		if line, orphan := reservationSets(r); line != "" {
			row("Concurrency sets", line)
			if orphan {
				held := "until it expires"
				if r.NoTTL {
					held = "for ever"
				}
				vm.Alert = strings.TrimSpace(vm.Alert + " Orphaned: its request id is in no concurrency set and it has outlived a request; its amount stays held " + held + ". An admin can release it.")
			}
		}
	case res.ConcurrencySet != nil:
		cs := res.ConcurrencySet
		if cs.Limit > 0 {
			vm.Summary = fmt.Sprintf("%s of %s in flight", format.Count(cs.InFlight), format.Count(cs.Limit))
			row("Cap", format.Count(cs.Limit))
			if cs.InFlight >= cs.Limit {
				vm.Alert = "At the cap: a new request is refused until one completes."
			}
		} else {
			vm.Summary = format.Count(cs.InFlight) + " in flight"
			row("Cap", "none in the pack (a deployment setting)")
		}
		row("In flight", format.Count(cs.InFlight))
		row("TTL left", format.TTL(cs.TTL))
		if cs.TTL < 0 && cs.InFlight > 0 {
			row("Expiry", "none: members of crashed requests are never dropped")
		}
		missing := 0
		for _, mb := range cs.Members {
			name, cut := views.ShortName(mb.ID)
			dm := views.DecodedMember{Name: name, Cut: cut}
			switch {
			case cs.ReservationFamily == "":
			case mb.TooLong:
				dm.Flag = "not checked: id longer than 4 KiB"
			case mb.Reservation == "":
				dm.Flag = "no reservation key can be built from this id"
			case mb.Reserved:
				if route.Linkable(mb.Reservation) {
					dm.Href = route.KeyURL(conn.Name, db, mb.Reservation)
				}
			default:
				dm.Flag = "no reservation"
				missing++
			}
			vm.Members = append(vm.Members, dm)
		}
		if n := len(cs.Members); n > 0 {
			vm.MembersTitle = "In-flight request ids"
			if cs.More {
				vm.MembersTitle += fmt.Sprintf(" (%s of %s, one SSCAN page)", format.Count(int64(n)), format.Count(cs.InFlight))
			}
			if cs.ReservationFamily != "" {
				vm.MembersTitle += ", linked to their reservation (family " + cs.ReservationFamily + ")"
				row("Without a reservation", fmt.Sprintf("%s of the %s read", format.Count(int64(missing)), format.Count(int64(n))))
				if missing > 0 && vm.Alert == "" {
					vm.Alert = format.Plural(int64(missing), "in-flight request has", "in-flight requests have") + " no reservation."
				}
			}
		}
	case res.BreakerHint != nil:
		h := res.BreakerHint
		state := views.EscapeName(h.State)
		if h.Open {
			vm.Summary = "open, " + format.TTL(h.TTL) + " left"
			row("State", "open: a replica opened its breaker; others may open theirs sooner (never a reason to close one)")
		} else {
			vm.Summary = state + ", " + format.TTL(h.TTL) + " left"
			row("State", state+" (not the \"open\" marker the gateway writes)")
		}
		row("TTL left", format.TTL(h.TTL))
		if h.TTL < 0 {
			vm.Alert = "No TTL: an advisory hint must expire, or every replica keeps opening its breaker on it."
		}
	case res.Leaderboard != nil:
		lb := res.Leaderboard
		vm.Summary = format.Plural(lb.Card, "entry", "entries")
		row("Entries", format.Count(lb.Card))
		if lb.Retained > 0 {
			row("Kept", "top "+format.Count(int64(lb.Retained))+" (pruned)")
		}
		if lb.HasTop {
			top, _ := views.ShortName(lb.Top)
			vm.Summary += ", top " + top + " (" + format.Score(lb.TopScore) + ")"
			row("Top entry", top)
			row("Top score", format.Score(lb.TopScore))
		}
		if route.Linkable(key) {
			link("Live leaderboard", "open the leaderboard page", route.Window{Conn: conn.Name, DB: db, Key: key, N: route.DefaultRows}.URL())
		}
	case res.Bloom != nil:
		b := res.Bloom
		row("Bits in the string", format.Count(b.Bits)+" ("+format.Plural(b.Bytes, "byte", "bytes")+")")
		row("Bits in the pack", format.Count(b.Configured))
		row("Hash functions", strconv.Itoa(b.Hashes))
		if b.Counted {
			vm.Summary = fmt.Sprintf("%s bits set (%s full), false positives ≈ %s", format.Count(b.SetBits), format.Percent(b.Fill, 2), fpRate(b.FalsePositive))
			row("Set bits", format.Count(b.SetBits))
			row("Fill", format.Percent(b.Fill, 2))
			row("False positives", fpRate(b.FalsePositive)+" (fill ^ "+strconv.Itoa(b.Hashes)+")")
		} else {
			vm.Summary = format.Bytes(b.Bytes) + ", too long to count"
			row("Set bits", "not counted: longer than "+format.Bytes(decode.MaxBloomBytes))
		}
		if b.Bits < b.Configured && b.Bits > 0 {
			row("Past the string's end", "unset (SETBIT grows it only to the highest bit set)")
		}
		if b.HasMembers {
			v := format.Count(b.Members)
			if route.Linkable(b.MembersKey) {
				link("Exact members", v+" in "+views.EscapeName(b.MembersKey), route.KeyURL(conn.Name, db, b.MembersKey))
			} else {
				row("Exact members", v)
			}
			vm.Summary += ", " + format.Plural(b.Members, "member", "members")
		}
		if b.Counted && b.Fill > 0.5 {
			vm.Alert = "Over half the bits are set: false positives are frequent; the filter needs rebuilding larger."
		}
	case res.Cooldown != nil:
		cd := res.Cooldown
		if cd.TTL < 0 {
			vm.Summary = "Cooling down, no TTL"
			row("TTL left", "none")
			vm.Alert = "No TTL: the cooldown never ends, so the action stays blocked."
		} else {
			vm.Summary = "Cooling down, " + format.Duration(cd.TTL) + " left"
			row("TTL left", format.TTL(cd.TTL))
			row("Ends at", format.Time(cd.Ends))
		}
	case res.Counter != nil:
		n := res.Counter
		if n.Limit > 0 {
			vm.Summary = fmt.Sprintf("%s of %s", format.Count(n.Value), format.Count(n.Limit))
			row("Count", format.Count(n.Value))
			row("Limit", format.Count(n.Limit))
			row("At the limit", n.OnExceed)
			if n.Reached {
				vm.Alert = "Limit reached (" + n.OnExceed + ")."
			}
		} else {
			vm.Summary = format.Count(n.Value)
			row("Count", format.Count(n.Value))
		}
		row("TTL left", format.TTL(n.TTL))
		if n.TTL >= 0 {
			vm.Summary += ", resets in " + format.Duration(n.TTL)
		}
	case res.Marker != nil:
		mk := res.Marker
		what := "Done"
		if f.Role == schema.RoleNonce {
			what = "Used"
		}
		value, _ := views.ShortName(mk.Value)
		row("Value", value)
		if !mk.At.IsZero() {
			row("Value as a time", format.Time(mk.At))
		}
		if mk.TTL < 0 {
			vm.Summary = what + ", kept for ever"
			row("TTL left", "none")
		} else {
			vm.Summary = what + ", forgotten in " + format.Duration(mk.TTL)
			row("TTL left", format.TTL(mk.TTL))
			row("Forgotten at", format.Time(now.Add(mk.TTL)))
		}
		if f.Role == schema.RoleNonce {
			row("Meaning", "a repeat of it is refused as a replay until it expires")
		} else {
			row("Meaning", "a repeat of the operation is skipped until it expires")
		}
	case res.Stats != nil:
		parts := make([]string, 0, 2)
		for _, sf := range res.Stats.Fields {
			v := "absent"
			if sf.Present {
				v = views.EscapeName(sf.Value)
				if n, err := strconv.ParseInt(sf.Value, 10, 64); err == nil {
					v = format.Count(n)
				}
				if len(parts) < 2 {
					parts = append(parts, sf.Name+" "+v)
				}
			}
			row(sf.Name, v)
		}
		vm.Summary = strings.Join(parts, ", ")
		if vm.Summary == "" {
			vm.Summary = "no counters yet"
		}
	}
	return vm
}

func unitSuffix(u string) string {
	if u == "" {
		return ""
	}
	return " " + u
}

// fpRate shows a probability: a percent when it is readable as one, else
// in scientific notation (1.2e-09).
func fpRate(p float64) string {
	if p == 0 {
		return "0"
	}
	if p >= 0.0001 {
		return format.Percent(p, 2)
	}
	return strconv.FormatFloat(p, 'e', 1, 64)
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

// reservationSets says where the reservation's request id was looked for,
// and whether that makes it orphaned.
func reservationSets(r *decode.Reservation) (line string, orphan bool) {
	switch {
	case !r.Checked:
		return "", false
	case r.InSet != "":
		return "its request id is in " + views.EscapeName(r.InSet), false
	case r.SetsChecked == 0 && r.SetsComplete:
		line = "none exists: its request id is in no concurrency set"
	case !r.SetsComplete:
		return "its request id is in none of the " + strconv.Itoa(r.SetsChecked) + " concurrency sets found; the bounded look did not find every set, so whether it is orphaned is not known", false
	default:
		line = "its request id is in none of the " + format.Plural(int64(r.SetsChecked), "concurrency set", "concurrency sets") + " of the database"
	}
	if r.Orphaned {
		return "orphaned: " + line, true
	}
	return line + " (not orphaned yet: younger than " + format.Duration(decode.ReservationLifetime) + ")", false
}
