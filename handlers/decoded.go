package handlers

import (
	"context"
	"math"
	"strconv"
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
	// A sensitive family is withheld whatever its role, with no read and
	// an empty summary, so a list showing summaries shows nothing of it.
	if vm, read := decodeRead(m, typ); !read {
		return vm
	}
	res, err := decode.ReadKey(ctx, conn, db, m, key, now)
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

// presenter shows one role's decoded state (a *decode.TokenBucket …) in
// the panel; each role's file registers its own.
type presenter func(d *panel, state any)

var presenters = map[schema.Role]presenter{}

// panel is the decoded panel being built and what a presenter may need to
// link from it: the connection's name, the key's database and name.
type panel struct {
	vm   *views.DecodedVM
	conn string
	db   int
	key  string
	role schema.Role
	now  time.Time
}

func (d *panel) row(label, value string) {
	d.vm.Rows = append(d.vm.Rows, views.DecodedRow{Label: label, Value: value})
}

// sentence adds a row whose value is a sentence the handler wrote, its
// times shown in the browser's zone (views.WithTimes); never a value read.
func (d *panel) sentence(label, value string) {
	d.vm.Rows = append(d.vm.Rows, views.DecodedRow{Label: label, Value: value, Sentence: true})
}

func (d *panel) link(label, value, href string) {
	d.vm.Rows = append(d.vm.Rows, views.DecodedRow{Label: label, Value: value, Href: href})
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
	if p, ok := presenters[f.Role]; ok && res.State != nil {
		p(&panel{vm: &vm, conn: conn.Name, db: db, key: key, role: f.Role, now: now}, res.State)
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
