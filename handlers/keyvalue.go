package handlers

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/keydeck/keydeck/internal/route"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/value"
	"github.com/keydeck/keydeck/views"
	"github.com/keydeck/keydeck/views/format"
)

// maxHex is how much of a string the hex view dumps: a dump is about four
// characters a byte, so 16 KiB keeps the page near 64 KiB of text.
const maxHex = 16 << 10

// keyValue reads and converts one page of a key's value. A malformed page
// position, score window or option that does not fit the key's type is
// the request's fault (an error); a failed read is said in the panel,
// beside the rest of the page.
func keyValue(ctx context.Context, conn *redisview.Conn, db int, key, typ string, v route.Value) (views.ValueVM, error) {
	if v.Member != "" && typ != "" && typ != "zset" {
		return views.ValueVM{}, fmt.Errorf("%w: a member lookup is for sorted sets, and this key is a %s", route.ErrParam, typ)
	}
	if len(v.Trail) > 0 && typ != "" && typ != "hash" && typ != "set" {
		return views.ValueVM{}, fmt.Errorf("%w: a scan trail is for hashes and sets, and this key is a %s", route.ErrParam, typ)
	}
	pg, err := value.Read(ctx, conn, db, key, value.Request{Type: typ, At: v.At, Filter: v.Filter, Desc: v.Desc, Min: v.Min, Max: v.Max})
	if errors.Is(err, value.ErrCursor) {
		return views.ValueVM{}, fmt.Errorf("%w: %s", route.ErrParam, err.Error())
	}
	if errors.Is(err, value.ErrTooLarge) {
		return views.ValueVM{Error: "Not shown: " + err.Error() + "."}, nil
	}
	if err != nil {
		return views.ValueVM{Error: "The value could not be read: " + err.Error()}, nil
	}
	if pg.Withheld {
		return views.ValueVM{Withheld: true}, nil
	}
	if pg.Type == "none" {
		return views.ValueVM{Error: "The key vanished while its page was read (expired or deleted)."}, nil
	}
	vp := valuePage{conn: conn.Name, db: db, key: key, v: v, pg: pg,
		// Every link keeps the window (order, score bounds, filter, view);
		// the scan trail and the member lookup are the link's own.
		base: route.Value{Filter: v.Filter, View: v.View, Desc: v.Desc, Min: v.Min, Max: v.Max}}
	vm := vp.header()
	if pg.Type == "string" {
		// The forms (jump) need the key in a form field, as below.
		if vp.formable() {
			vm.FormAction, vm.FormKey = route.KeyPath(conn.Name, db), key
		}
		stringVM(&vm, pg, v, func(view, at string) string {
			return route.KeyValueURL(conn.Name, db, key, route.Value{View: view, At: at})
		})
		vm.Jumpable = vm.Jumpable && vm.FormKey != ""
		return vm, nil
	}
	vp.table(&vm)
	vp.jump(&vm)
	if pg.Type == "zset" {
		vp.scoreWindow(&vm)
		if v.Member != "" {
			lk, err := memberLookup(ctx, conn, db, key, v.Member)
			if err != nil {
				return views.ValueVM{}, err
			}
			vm.Lookup, vm.Member = lk, views.ValidText(v.Member)
		}
	}
	if pg.Type == "stream" {
		asc, desc := vp.base, vp.base
		asc.Desc, desc.Desc = false, true
		vm.Orders = []views.ValueTab{
			{Name: "Oldest first", Href: vp.url(asc), Active: !pg.Desc},
			{Name: "Newest first", Href: vp.url(desc), Active: pg.Desc},
		}
	}
	vm.PageNote = vp.pageNote()
	vp.paging(&vm)
	return vm, nil
}

// valuePage is one page of a key's value on its way to the view model:
// the key, the request's window (v; base, what every link keeps) and the
// page read.
type valuePage struct {
	conn string
	db   int
	key  string
	v    route.Value
	base route.Value
	pg   value.Page
}

func (vp valuePage) url(u route.Value) string { return route.KeyValueURL(vp.conn, vp.db, vp.key, u) }

// link is the window's link to another position.
func (vp valuePage) link(at string) string {
	u := vp.base
	u.At = at
	return vp.url(u)
}

// formable: a GET form's hidden input is sent as the browser decodes it,
// so only a key that is UTF-8 survives the round trip.
func (vp valuePage) formable() bool { return utf8.ValidString(vp.key) && route.Linkable(vp.key) }

func (vp valuePage) header() views.ValueVM {
	pg := vp.pg
	vm := views.ValueVM{Type: pg.Type, Length: format.Size(pg.Length, pg.Type), Encoding: "encoding: " + pg.Encoding}
	if pg.Encoding == "" {
		vm.Encoding = "encoding unknown on this server"
	}
	return vm
}

// table is a collection's columns and one row per element.
func (vp valuePage) table(vm *views.ValueVM) {
	switch vp.pg.Type {
	case "hash":
		vm.Columns = []views.ValueColumn{{Name: "Field"}, {Name: "Value"}}
	case "set":
		vm.Columns = []views.ValueColumn{{Name: "Member"}}
	case "list":
		vm.Columns = []views.ValueColumn{{Name: "Index", Narrow: true}, {Name: "Element"}}
	case "zset":
		// ZRANK's ranks: 0 is the lowest score, whatever order the
		// application reads its board in.
		vm.Columns = []views.ValueColumn{{Name: "Rank (0 = lowest score)", Narrow: true}, {Name: "Member"}, {Name: "Score", Narrow: true}}
	case "stream":
		vm.Columns = []views.ValueColumn{{Name: "Entry ID"}, {Name: "Fields"}}
	}
	for _, e := range vp.pg.Elements {
		var row []views.ValueCell
		switch vp.pg.Type {
		case "hash":
			row = []views.ValueCell{cell(e.Name), cell(e.Value)}
		case "set":
			row = []views.ValueCell{cell(e.Name)}
		case "list":
			row = []views.ValueCell{{Text: format.Count(e.Index)}, cell(e.Value)}
		case "zset":
			row = []views.ValueCell{{Text: format.Count(e.Index)}, cell(e.Name), {Text: format.Score(e.Score)}}
		case "stream":
			row = []views.ValueCell{cell(e.Name), entryCell(e)}
		}
		vm.Rows = append(vm.Rows, row)
	}
}

// jump is the form that goes to a position, keeping the window.
func (vp valuePage) jump(vm *views.ValueVM) {
	pg, v := vp.pg, vp.v
	formable := vp.formable()
	if formable {
		vm.FormAction, vm.FormKey = route.KeyPath(vp.conn, vp.db), vp.key
	}
	vm.Jumpable = formable
	if v.Desc {
		vm.JumpHidden = append(vm.JumpHidden, views.ValueHidden{Name: "order", Value: "desc"})
	}
	if v.Filter != "" && utf8.ValidString(v.Filter) {
		vm.JumpHidden = append(vm.JumpHidden, views.ValueHidden{Name: "q", Value: v.Filter})
	}
	if pg.ByScore {
		vm.JumpHidden = append(vm.JumpHidden, views.ValueHidden{Name: "min", Value: v.Min}, views.ValueHidden{Name: "max", Value: v.Max})
	}
	switch {
	case pg.Scanned:
		vm.JumpLabel, vm.JumpHint = "Go to cursor", "scan cursor"
	case pg.Type == "stream":
		vm.JumpLabel, vm.JumpHint = "Go to entry ID", "ms or ms-seq"
	case pg.ByScore:
		vm.JumpLabel, vm.JumpHint = "Go to offset in window", "0 = first"
	case pg.Type == "zset":
		vm.JumpLabel, vm.JumpHint = "Go to rank", "0 = lowest"
	default:
		vm.JumpLabel, vm.JumpHint = "Go to index", "0 = first"
	}
	if pg.Scanned {
		vm.Filterable, vm.Filter = formable, views.ValidText(v.Filter)
	}
}

// scoreWindow is a sorted set's score and lookup forms, and what its
// score window holds.
func (vp valuePage) scoreWindow(vm *views.ValueVM) {
	pg, v := vp.pg, vp.v
	formable := vp.formable()
	vm.ScoreForm, vm.LookupForm = formable, formable
	vm.Min, vm.Max = views.ValidText(v.Min), views.ValidText(v.Max)
	if !pg.ByScore {
		return
	}
	vm.ClearWindow = vp.url(route.Value{})
	vm.WindowNote = fmt.Sprintf("Score window %s … %s: %s", pg.Min, pg.Max, format.Plural(pg.InWindow, "member", "members"))
	if pg.InWindow > 0 {
		vm.WindowNote += fmt.Sprintf(", ranks %s–%s", format.Count(pg.FirstRank), format.Count(pg.FirstRank+pg.InWindow-1))
	}
	vm.WindowNote += "."
}

// pageNote says what the page shows of the value.
func (vp valuePage) pageNote() string {
	pg, v := vp.pg, vp.v
	switch {
	case pg.Scanned:
		note := format.Size(int64(len(pg.Elements)), pg.Type) + " on this scan page"
		if v.Filter != "" {
			note += ", containing “" + views.EscapeName(v.Filter) + "”"
		}
		if pg.Capped {
			note += fmt.Sprintf("; the server answered with more than a page at once, so this page shows the first %d and Next continues from there", value.PageSize)
		}
		return note + " (a scan page's size varies, and one may appear on two pages)"
	case len(pg.Elements) > 0 && pg.Type == "stream":
		note := format.Plural(int64(len(pg.Elements)), "entry", "entries") + " of " + format.Count(pg.Length)
		if pg.Desc {
			note += ", newest first"
		}
		return note
	case len(pg.Elements) > 0:
		first := pg.Elements[0].Index
		total := pg.Length
		if pg.ByScore {
			first, total = first-pg.FirstRank, pg.InWindow
		}
		note := fmt.Sprintf("%s–%s of %s", format.Count(first+1), format.Count(first+int64(len(pg.Elements))), format.Count(total))
		if pg.ByScore {
			note += " in the window"
		}
		return note
	case pg.Length == 0:
		return "Empty."
	}
	return "Nothing here: the window is past the end."
}

// paging is the links to the pages around this one.
func (vp valuePage) paging(vm *views.ValueVM) {
	pg, v := vp.pg, vp.v
	if pg.Scanned {
		// A scan cannot go back by itself: the links carry the cursors of
		// the pages before (at most route.MaxTrail of them).
		at := v.At
		if at == "" {
			at = "0"
		}
		if pg.Next != "" {
			u := vp.base
			u.At, u.Trail = pg.Next, append(slices.Clone(v.Trail), at)
			if len(u.Trail) > route.MaxTrail {
				u.Trail = u.Trail[len(u.Trail)-route.MaxTrail:]
			}
			vm.Next = vp.url(u)
		}
		if n := len(v.Trail); n > 0 {
			u := vp.base
			u.At, u.Trail = v.Trail[n-1], v.Trail[:n-1]
			if u.At == "0" {
				u.At = ""
			}
			vm.Prev = vp.url(u)
		}
	} else {
		if pg.Prev != "" {
			vm.Prev = vp.link(pg.Prev)
		}
		if pg.Next != "" {
			vm.Next = vp.link(pg.Next)
		}
		if pg.Last != "" {
			vm.Last = vp.link(pg.Last)
		}
	}
	if v.At != "" {
		vm.First = vp.link("")
	}
}

// memberLookup answers the member box: its score and rank, and the rank
// page that holds it, or that it is not there.
func memberLookup(ctx context.Context, conn *redisview.Conn, db int, key, member string) (*views.ValueLookup, error) {
	m, err := value.Lookup(ctx, conn, db, key, member)
	shown, _ := views.ShortName(member)
	switch {
	case err != nil:
		return &views.ValueLookup{Text: "The member could not be looked up: " + err.Error()}, nil
	case m.Withheld:
		return nil, nil
	case !m.Found:
		return &views.ValueLookup{Text: "No member “" + shown + "” in this sorted set."}, nil
	}
	return &views.ValueLookup{Found: true,
		Text: fmt.Sprintf("“%s”: score %s, rank %s (ZRANK, 0 = lowest score).", shown, format.Score(m.Score), format.Count(m.Rank)),
		Href: route.KeyValueURL(conn.Name, db, key, route.Value{At: m.At}),
	}, nil
}

// entryCell shows a stream entry's fields as "field = value" pairs, and
// says when values or fields were left off.
func entryCell(e value.Element) views.ValueCell {
	var b strings.Builder
	var notes []string
	for i := 0; i+1 < len(e.Fields); i += 2 {
		if i > 0 {
			b.WriteString("  ")
		}
		f, val := cell(e.Fields[i]), cell(e.Fields[i+1])
		b.WriteString(f.Text + " = " + val.Text)
		if f.Note != "" {
			notes = append(notes, "a field name: "+f.Note)
		}
		if val.Note != "" {
			notes = append(notes, f.Text+": "+val.Note)
		}
	}
	if shown := int64(len(e.Fields) / 2); shown < e.FieldCount {
		notes = append(notes, fmt.Sprintf("%s of %s fields shown", format.Count(shown), format.Count(e.FieldCount)))
	}
	return views.ValueCell{Text: b.String(), Note: strings.Join(notes, "; ")}
}

// cell shows one part escaped, and says how much of it was left off.
func cell(p value.Part) views.ValueCell {
	c := views.ValueCell{Text: views.EscapeName(p.Bytes)}
	if p.Cut() {
		c.Text += "…"
		c.Note = fmt.Sprintf("%s of %s shown", format.Count(int64(len(p.Bytes))), format.ByteCount(int64(p.Len)))
	}
	return c
}

// stringVM shows a window of a string as text, hex or pretty JSON, with
// links to the windows before and after (64 KiB of text, 16 KiB of hex).
// Bytes that are not UTF-8 are binary: hex unless text is asked for, where
// they read as \xNN.
func stringVM(vm *views.ValueVM, pg value.Page, v route.Value, link func(view, at string) string) {
	vm.IsString = true
	raw := pg.String
	at := pg.Offset
	whole := at == 0 && int64(len(raw)) == pg.Length
	binary, isJSON := stringKind(pg)
	if whole {
		vm.Edit, vm.EditEncoding = editValue(raw)
	}
	view := v.View
	if view == "" || (view == "json" && !isJSON) {
		switch {
		case binary:
			view = "hex"
		case isJSON:
			view = "json"
		default:
			view = "text"
		}
	}
	names := []string{"text", "hex"}
	if isJSON {
		names = append(names, "json")
	}
	for _, n := range names {
		vm.Views = append(vm.Views, views.ValueTab{Name: n, Href: link(n, v.At), Active: n == view})
	}
	win := int64(value.MaxString)
	if view == "hex" {
		win = maxHex
		if len(raw) > maxHex {
			raw = raw[:maxHex]
		}
	}
	var notes []string
	if binary {
		notes = append(notes, "Binary (not UTF-8).")
	}
	switch {
	case whole:
	case len(raw) == 0:
		notes = append(notes, fmt.Sprintf("Nothing here: byte %s is past the end (%s).", format.Count(at), format.ByteCount(pg.Length)))
	default:
		notes = append(notes, fmt.Sprintf("Bytes %s–%s of %s.", format.Count(at), format.Count(at+int64(len(raw))-1), format.ByteCount(pg.Length)))
	}
	switch view {
	case "hex":
		vm.Text = hexDump([]byte(raw), at)
	case "json":
		var b bytes.Buffer
		if json.Indent(&b, []byte(raw), "", "  ") == nil {
			raw = b.String()
		}
		vm.Text = escapeLines(raw)
	default:
		vm.Text = escapeLines(raw)
	}
	vm.TextNote = strings.Join(notes, " ")
	stringPaging(vm, pg, v, int64(len(raw)), win, link)
}

// stringKind reads the window of a string: binary when its bytes are not
// UTF-8 (a window may start and end inside a character, which does not
// count), JSON when the whole string is valid JSON.
func stringKind(pg value.Page) (binary, isJSON bool) {
	raw := pg.String
	at := pg.Offset
	whole := at == 0 && int64(len(raw)) == pg.Length
	check := raw
	if at > 0 { // the window may start inside a character
		for i := 0; i < utf8.UTFMax-1 && len(check) > 0 && !utf8.RuneStart(check[0]); i++ {
			check = check[1:]
		}
	}
	if at+int64(len(raw)) < pg.Length { // … and end inside one
		for i := 0; i < utf8.UTFMax-1 && len(check) > 0 && !utf8.ValidString(check); i++ {
			check = check[:len(check)-1]
		}
	}
	binary = !utf8.ValidString(check)
	return binary, whole && !binary && json.Valid([]byte(raw))
}

// stringPaging is the jump form and the links to the windows around this
// one (shown: how many bytes of the value this window shows, in windows
// of win bytes), when the string is longer than one window.
func stringPaging(vm *views.ValueVM, pg value.Page, v route.Value, shown, win int64, link func(view, at string) string) {
	at := pg.Offset
	if pg.Length <= win {
		return
	}
	vm.Jumpable = true
	vm.JumpLabel, vm.JumpHint = "Go to byte", "0 = first"
	if v.View != "" {
		vm.JumpHidden = []views.ValueHidden{{Name: "view", Value: v.View}}
	}
	if at > 0 {
		vm.First = link(v.View, "")
		vm.Prev = link(v.View, strconv.FormatInt(max(0, at-win), 10))
	}
	if end := at + shown; shown > 0 && end < pg.Length {
		vm.Next = link(v.View, strconv.FormatInt(end, 10))
	}
	if last := (pg.Length - 1) / win * win; last > at {
		vm.Last = link(v.View, strconv.FormatInt(last, 10))
	}
}

// hexDump is hex.Dump with offsets counted from base.
func hexDump(b []byte, base int64) string {
	lines := strings.SplitAfter(hex.Dump(b), "\n")
	for i, l := range lines {
		if len(l) < 8 {
			continue
		}
		if off, err := strconv.ParseInt(l[:8], 16, 64); err == nil {
			lines[i] = fmt.Sprintf("%08x", base+off) + l[8:]
		}
	}
	return strings.Join(lines, "")
}

// escapeLines escapes each line, keeping the line breaks as breaks.
func escapeLines(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = views.EscapeName(l)
	}
	return strings.Join(lines, "\n")
}
