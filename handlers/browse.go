package handlers

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/keydeck/keydeck/internal/live"
	"github.com/keydeck/keydeck/internal/route"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/action"
	"github.com/keydeck/keydeck/redisview/browse"
	"github.com/keydeck/keydeck/redisview/schema"
	"github.com/keydeck/keydeck/views"
	"github.com/keydeck/keydeck/views/format"
)

// noFamily: a key list of a family the connection's pack does not have
// in that database (404).
type noFamily struct{ msg string }

func (e noFamily) Error() string { return e.msg }
func (e noFamily) Unwrap() error { return route.ErrNoPage }

// request resolves the list against the connection's pack.
func (l keyList) request(conn *redisview.Conn) (browse.Request, error) {
	cls := conn.Classifier()
	if cls == nil {
		why := conn.PackChoice().Why
		if why == "" {
			why = "the connection is still being matched to a pack"
		}
		return browse.Request{}, echo.NewHTTPError(http.StatusServiceUnavailable,
			"Not known yet which keys belong to which family: no schema pack ("+why+").")
	}
	req := browse.Request{Classifier: cls, Prefix: l.Prefix, Flat: l.Flat, Pattern: l.Pattern, At: l.At}
	if l.IsPrefix || l.Pattern != "" {
		return req, nil
	}
	f := cls.Pack().Family(l.Family)
	if f == nil || !f.InDB(l.DB) {
		name, _ := views.ShortName(l.Family)
		return browse.Request{}, withBack(noFamily{fmt.Sprintf("The pack %s has no family “%s” in db%d.", cls.Pack().Name, name, l.DB)},
			route.DatabaseURL(l.Conn, l.DB))
	}
	req.Family = f
	return req, nil
}

// keysPage lists one page of a family's keys, or of the keys no family
// matches that start with a prefix; the websocket keeps its rows live.
func (a *App) keysPage(c echo.Context) error {
	conn, db, err := a.connDB(c)
	if err != nil {
		return err
	}
	l, err := parseKeyList(conn.Name, db, c.QueryParams())
	if err != nil {
		return err
	}
	req, err := l.request(conn)
	if err != nil {
		return err
	}
	vm := keysHeadVM(l, req)
	vm.Export, vm.ExportNote = keysExport(l, req)
	vm.Bulk = a.bulkForms(c, l)
	title := fmt.Sprintf("db%d · %s", db, vm.Heading)
	show := func(status int) error {
		return render(c, status, vm, views.KeysPage(a.page(c, title, conn.Name), vm))
	}
	if st := conn.Status(); !st.Up && !st.Checked.IsZero() {
		vm.Disconnected = "Redis is unreachable — " + statusText(st) + ": no key was read."
		return show(http.StatusOK)
	}
	ctx := c.Request().Context()
	req.Budget = a.scanTap(conn.Name, identity(c).Holder()) // the caller's share, as searches
	pg, err := browse.List(ctx, conn, db, req)
	if errors.Is(err, redisview.ErrBadCursor) { // ?at= of another kind of deployment: 400
		return err
	}
	if err != nil {
		if st := conn.Status(); !st.Up && !st.Checked.IsZero() {
			vm.Disconnected = "Redis is unreachable — " + statusText(st) + ": no key was read."
			return show(http.StatusOK)
		}
		vm.Err = "The keys could not be listed: " + err.Error()
		return show(http.StatusBadGateway)
	}
	keysPageVM(&vm, l, req, pg)
	vm.Live = a.keysLiveVM(ctx, conn, db, req.Family, pg.Keys, nil)
	return show(http.StatusOK)
}

// keysHeadVM is what the page says before anything is read.
func keysHeadVM(l keyList, req browse.Request) views.KeysPageVM {
	vm := views.KeysPageVM{Conn: l.Conn, DB: l.DB, Prefix: l.Prefix,
		WSURL: route.LiveURL(KeysTopic{List: l}.String())}
	w := browse.WalkOf(req)
	if f := req.Family; f != nil {
		vm.Family, vm.Role, vm.Domain, vm.Pattern, vm.Sensitive = f.ID, string(f.Role), f.Domain, f.Pattern.String(), f.Sensitive
		vm.Heading = "family " + f.ID
		if w.Type != "" {
			vm.TypeNote = "Keys of this family stored as another type than " + w.Type +
				" are not listed here (SCAN TYPE leaves them out); the database page lists them as schema violations."
		}
	} else if l.Pattern != "" {
		patternHead(&vm, l)
	} else {
		vm.Heading = "keys matching no family"
		if l.Prefix != "" {
			short, cut := views.ShortName(l.Prefix)
			if cut {
				short += "…"
			}
			vm.Heading += ", starting with “" + short + "”"
		}
		vm.Flat = l.Flat
		p, cut := views.ShortName(l.Prefix)
		if cut {
			p += "…"
		}
		switch {
		case l.Flat && l.Prefix == "":
			vm.Heading += ", with no ':' in the name"
			vm.Scope = "The keys of the database page's group “(no colon)”: names without a ':'."
		case l.Flat:
			vm.Heading += ", with no further ':'"
			vm.Scope = "The keys of the database page's group “" + p + "*”: names with no ':' after “" + p + "”. Deeper names (“" + p + "x:…”) are groups of their own on the database page and are not listed here."
		case l.Prefix == "":
			vm.Scope = "Every key of the database that no family matches."
		default:
			vm.Scope = "Every key that no family matches and starts with “" + p + "”, deeper names included."
		}
	}
	match, _ := views.ShortName(w.Match)
	vm.Walk = "Found with SCAN MATCH " + match
	if w.Type != "" {
		vm.Walk += " TYPE " + w.Type
	}
	vm.Walk += fmt.Sprintf(" COUNT %d, at most %d SCAN calls and %d keys a page; never KEYS.", browse.Count, browse.MaxScans, browse.PageKeys)
	if w.WholeDB {
		if req.Family != nil {
			vm.WholeDB = "The pattern starts with a placeholder, so no prefix narrows the walk: it reads the whole database, page by page, and MATCH keeps keys containing “" + req.Family.Pattern.LongestLiteral() + "”."
		} else {
			vm.WholeDB = "No prefix narrows the walk: it reads the whole database, page by page."
		}
	}
	return vm
}

// keysPageVM fills in what a page's walk found.
func keysPageVM(vm *views.KeysPageVM, l keyList, req browse.Request, pg browse.Page) {
	which := "of this family"
	if req.Pattern != "" {
		which = "matching the pattern"
	} else if req.Family == nil {
		which = "matching no family"
	}
	vm.Progress = fmt.Sprintf("Scanned with %s (COUNT %d): %s the pattern, %s %s on this page.",
		format.Plural(int64(pg.Scans), "SCAN call", "SCAN calls"), browse.Count,
		format.Plural(int64(pg.Returned), "key matched", "keys matched"),
		format.Count(int64(len(pg.Keys))), which)
	if pg.Skipped > 0 {
		vm.Progress = strings.TrimSuffix(vm.Progress, ".") + fmt.Sprintf(" (that SCAN reply's first %s were on earlier pages).", format.Count(int64(pg.Skipped)))
	}
	switch {
	case pg.End:
		vm.State, vm.StateText = "end", "End of the database: the walk reached SCAN cursor 0, there is no next page."
	case pg.Budget:
		vm.State, vm.StateText = "budget", fmt.Sprintf("Continuing: this page stopped after its budget of %d SCAN calls; the next page goes on from there.", pg.Scans)
	default:
		vm.State, vm.StateText = "more", "Continuing: the page is full; the next page goes on from there."
	}
	if l.At != (browse.Cursor{}) {
		vm.First = l.URL(browse.Cursor{})
	}
	if !pg.End {
		vm.Next = l.URL(pg.Next)
	}
	if len(pg.Keys) > 0 {
		return
	}
	switch {
	case pg.End && l.At == (browse.Cursor{}) && req.Family != nil:
		vm.Empty = fmt.Sprintf("No key of this family in db%d.", l.DB)
	case pg.End && l.At == (browse.Cursor{}) && req.Pattern != "":
		vm.Empty = fmt.Sprintf("No key of db%d matches this pattern.", l.DB)
	case pg.End && l.At == (browse.Cursor{}):
		vm.Empty = fmt.Sprintf("No key of db%d that matches no family starts with this prefix.", l.DB)
	case pg.End:
		vm.Empty = "No more keys: the walk reached the end of the database."
	default:
		vm.Empty = "None on this page: the walk has not reached the end of the database yet; the next page goes on."
	}
}

// keysLiveVM reads each key's role summary and converts the page's rows.
// gone counts, when the live view re-reads, how many keys vanished.
func (a *App) keysLiveVM(ctx context.Context, conn *redisview.Conn, db int, fam *schema.Family, keys []browse.Key, readErr error) views.KeysLiveVM {
	vm := views.KeysLiveVM{HasSummary: fam != nil}
	if fam != nil {
		for _, ph := range fam.Pattern.Placeholders() {
			vm.VarNames = append(vm.VarNames, ph.Name)
		}
	}
	if readErr != nil {
		vm.Err = "Not read this time: " + readErr.Error()
	}
	decoded := keySummaries(ctx, conn, db, fam, keys, a.now())
	gone := 0
	for i, k := range keys {
		r := keyListRow(conn.Name, db, fam, k, decoded[i])
		if r.Gone {
			gone++
		}
		vm.Rows = append(vm.Rows, r)
	}
	vm.Note = keysLiveNote(fam != nil, len(keys), gone)
	return vm
}

// keySummaries is each key's role summary (none without a family). They
// are read all at once (browse.DecodeAll): a tick costs one pipeline (two
// for roles with a second phase), not one round trip per command of each
// row.
func keySummaries(ctx context.Context, conn *redisview.Conn, db int, fam *schema.Family, keys []browse.Key, now time.Time) []views.DecodedVM {
	var toRead []int
	var names []string
	var ms []schema.Match
	decoded := make([]views.DecodedVM, len(keys))
	for i, k := range keys {
		if fam == nil || k.Type == "" {
			continue
		}
		if d, read := decodeRead(k.Match, k.Type); !read {
			decoded[i] = d
			continue
		}
		toRead = append(toRead, i)
		names = append(names, k.Name)
		ms = append(ms, k.Match)
	}
	if len(toRead) > 0 {
		out := browse.DecodeAll(ctx, conn, db, names, ms, now)
		for j, i := range toRead {
			decoded[i] = decodedVM(conn, db, keys[i].Name, keys[i].Match, out[j].Result, out[j].Err, now)
		}
	}
	return decoded
}

// keyListRow is one key of the list, with its summary d when the list is
// a family's (fam).
func keyListRow(conn string, db int, fam *schema.Family, k browse.Key, d views.DecodedVM) views.KeyListRow {
	r := views.KeyListRow{Key: k.Name, Href: keyHref(conn, db, k.Name), Type: k.Type, TTL: format.TTL(-1), Size: "n/a"}
	for _, v := range k.Match.Vars {
		r.Vars = append(r.Vars, views.KeyVar{Name: v.Name, Value: v.Value, Decoded: v.Decoded})
	}
	switch {
	case k.Type == "":
		r.Gone = true
	default:
		if k.TTL >= 0 {
			r.TTL = format.TTL(k.TTL)
		}
		if k.Size >= 0 {
			r.Size = format.Size(k.Size, k.Type)
		}
	}
	if fam != nil {
		r.Summary = "—"
		switch {
		case fam.Sensitive:
			r.Summary, r.Withheld = "withheld", true
		case r.Gone:
		case d.Withheld:
			r.Summary, r.Withheld = "withheld", true
		case d.Summary != "":
			r.Summary = d.Summary
		case d.Note != "":
			r.Summary = d.Note
		}
	}
	return r
}

// keysLiveNote says what the live rows re-read (summary: a family's list)
// of how many keys, and how many are gone.
func keysLiveNote(summary bool, keys, gone int) string {
	note := "Live: type, TTL, size"
	if summary {
		note += " and summary"
	}
	if keys == 1 {
		note += " of this key"
	} else {
		note += " of these " + format.Count(int64(keys)) + " keys"
	}
	note += " re-read at every poll, with no new SCAN."
	if gone > 0 {
		note += " " + format.Plural(int64(gone), "key is", "keys are") + " gone."
	}
	return note
}

const keysKind = "keys"

// KeysTopic is the live rows of one page of a key list, "keys:<query>":
// the page's walk once, then its keys re-read every tick.
type KeysTopic struct{ List keyList }

func (t KeysTopic) String() string    { return keysKind + ":" + t.List.Values().Encode() }
func (KeysTopic) Level() action.Level { return action.Viewer }

func parseKeysTopic(arg string) (Topic, error) {
	q, err := url.ParseQuery(arg)
	if err != nil {
		return nil, err
	}
	db, err := route.ParseDB(q.Get("db"))
	if err != nil {
		return nil, err
	}
	name := q.Get("conn")
	if !redisview.ValidName(name) {
		return nil, ErrUnknownTopic
	}
	q.Del("conn")
	q.Del("db")
	l, err := parseKeyList(name, db, q)
	if err != nil {
		return nil, err
	}
	t := KeysTopic{List: l}
	if t.String() != keysKind+":"+arg {
		return nil, ErrUnknownTopic // one name per topic: one poller per view
	}
	return t, nil
}

func (t KeysTopic) source(a *App) (func() live.Source, error) {
	conn, err := a.conns.Get(t.List.Conn)
	if err != nil {
		return nil, err
	}
	req, err := t.List.request(conn)
	if err != nil {
		return nil, fmt.Errorf("%w %q: %w", ErrUnknownTopic, t.String(), err)
	}
	return func() live.Source {
		return &keysSource{a: a, conn: conn, db: t.List.DB, req: req}
	}, nil
}

// keysSource walks the page once, on its first poll, and then only re-reads
// the keys it found: the key set of a live list does not change.
type keysSource struct {
	a    *App
	conn *redisview.Conn
	db   int
	req  browse.Request
	keys []browse.Key
	read bool
}

func (s *keysSource) Poll(ctx context.Context) ([]byte, error) {
	var err error
	if !s.read {
		var pg browse.Page
		if pg, err = browse.List(ctx, s.conn, s.db, s.req); err == nil {
			s.keys, s.read = pg.Keys, true
		}
	} else {
		names := make([]string, len(s.keys))
		for i, k := range s.keys {
			names[i] = k.Name
		}
		var infos []browse.Info
		if infos, err = browse.Read(ctx, s.conn, s.db, names, browse.WalkOf(s.req).Type); err == nil {
			for i := range s.keys {
				s.keys[i].Info = infos[i]
			}
		}
	}
	if err != nil {
		if st := s.conn.Status(); !st.Up && !st.Checked.IsZero() {
			err = errors.New("Redis is unreachable — " + statusText(st))
		}
	}
	return renderBytes(ctx, views.KeysLive(s.a.keysLiveVM(ctx, s.conn, s.db, s.req.Family, s.keys, err), true))
}

func (s *keysSource) Close() error { return nil }

// prefixListHref links an unmatched-prefix row of the database page to its
// key list. The sweep groups keys as "a:b:*" or "a:*" (the prefix is what
// precedes the "*"); its "(no colon)" and "(other prefixes)" groups link
// to every key that matches no family.
func prefixListHref(conn string, db int, group string) string {
	p, ok := strings.CutSuffix(group, "*")
	flat := false
	switch {
	case group == "(no colon)":
		p, flat = "", true
	case !ok:
		p = "" // "(other prefixes)": the groups past the sweep's limit
	default:
		// "a:*" is the keys "a:x" (no further ':'); "a:b:*" every key
		// under "a:b:".
		flat = strings.Count(p, ":") == 1
	}
	if !route.Linkable(p) {
		return ""
	}
	u := route.PrefixKeysURL(conn, db, p)
	if flat {
		u += "&flat=1"
	}
	return u
}
