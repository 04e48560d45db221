package route

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// AuditTimeLayout is how the filter's times travel. The datetime-local
// inputs carry no zone; Keydeck reads them as UTC and shows times in UTC,
// so what is typed matches what is listed.
const AuditTimeLayout = "2006-01-02T15:04"

// AuditFilter is the audit page's parameters. Until is the minute typed:
// the records of that minute are included.
type AuditFilter struct {
	User, Action, Key string
	Since, Until      time.Time
	// Before is the page: records older than this id ("" = the newest).
	Before string
}

// Values are the filter's parameters without the page, in canonical form
// (the live topic names the filter by them).
func (f AuditFilter) Values() url.Values {
	q := url.Values{}
	set := func(k, v string) {
		if v != "" {
			q.Set(k, v)
		}
	}
	set("user", f.User)
	set("action", f.Action)
	set("key", f.Key)
	if !f.Since.IsZero() {
		q.Set("since", f.Since.Format(AuditTimeLayout))
	}
	if !f.Until.IsZero() {
		q.Set("until", f.Until.Format(AuditTimeLayout))
	}
	return q
}

// URL is the audit page showing f.
func (f AuditFilter) URL() string {
	q := f.Values()
	if f.Before != "" {
		q.Set("before", f.Before)
	}
	if len(q) == 0 {
		return Audit
	}
	return Audit + "?" + q.Encode()
}

// AuditRecord is one audit record's own page: the place an action's
// confirmation leads to, and a link to share.
const AuditRecord = Audit + "/:id"

// AuditRecordURL is the page of the audit record id.
func AuditRecordURL(id string) string { return Audit + "/" + url.PathEscape(id) }

// ParseAuditRecordID reads an audit record page's id: a stream id
// ("1733150000000-0"); anything else names no page.
func ParseAuditRecordID(id string) (string, error) {
	ms, seq, ok := strings.Cut(id, "-")
	if !ok || !digits(ms) || !digits(seq) || len(ms) > 20 || len(seq) > 20 {
		return "", fmt.Errorf("%w: %q is not an audit record id", ErrNoPage, id)
	}
	return id, nil
}

func digits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// ParseAuditFilter reads the audit page's filter.
func ParseAuditFilter(q url.Values) (AuditFilter, error) {
	f := AuditFilter{User: strings.TrimSpace(q.Get("user")), Action: q.Get("action"), Key: q.Get("key"), Before: q.Get("before")}
	for _, t := range []struct {
		name string
		dst  *time.Time
	}{{"since", &f.Since}, {"until", &f.Until}} {
		if v := q.Get(t.name); v != "" {
			ts, err := time.Parse(AuditTimeLayout, v)
			if err != nil {
				return f, badParam("%s: want a date and time like 2026-11-29T14:30", t.name)
			}
			*t.dst = ts
		}
	}
	if len(f.User) > 64 || len(f.Key) > 256 || len(f.Action) > 64 || len(f.Before) > 64 {
		return f, badParam("A filter value is too long.")
	}
	return f, nil
}

// Undo names the audit record an undo reverses: the undo step's parameters.
type Undo struct {
	Conn   string
	DB     int
	Record string
}

// URL opens the confirmation step of the undo (a GET: the preview changes
// nothing).
func (u Undo) URL() string {
	q := url.Values{"conn": {u.Conn}, "db": {strconv.Itoa(u.DB)}, "record": {u.Record}}
	return UndoPreview + "?" + q.Encode()
}

// ParseUndo reads an undo's parameters.
func ParseUndo(q url.Values) (Undo, error) {
	db, err := ParseDB(q.Get("db"))
	if err != nil {
		return Undo{}, err
	}
	return Undo{Conn: q.Get("conn"), DB: db, Record: q.Get("record")}, nil
}
