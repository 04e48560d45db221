package handlers

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/keydeck/keydeck/handlers/route"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/value"
	"github.com/keydeck/keydeck/views"
	"github.com/keydeck/keydeck/views/format"
)

// maxHex is how much of a string the hex view dumps: a dump is about four
// characters a byte, so 16 KiB keeps the page near 64 KiB of text.
const maxHex = 16 << 10

// keyValue reads and converts one page of a key's value. A malformed page
// position is the request's fault (an error); a failed read is said in the
// panel, beside the rest of the page.
func keyValue(ctx context.Context, conn *redisview.Conn, db int, key, typ string, v route.Value) (views.ValueVM, error) {
	pg, err := value.Read(ctx, conn, db, key, value.Request{Type: typ, At: v.At, Filter: v.Filter})
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
	vm := views.ValueVM{Type: pg.Type, Length: format.Size(pg.Length, pg.Type)}
	link := func(at string) string {
		return route.KeyValueURL(conn.Name, db, key, route.Value{At: at, Filter: v.Filter, View: v.View})
	}
	switch pg.Type {
	case "none":
		return views.ValueVM{Error: "The key vanished while its page was read (expired or deleted)."}, nil
	case "string":
		stringVM(&vm, pg, v, func(view string) string {
			return route.KeyValueURL(conn.Name, db, key, route.Value{View: view})
		})
		return vm, nil
	case "hash":
		vm.Columns = []views.ValueColumn{{Name: "Field"}, {Name: "Value"}}
	case "set":
		vm.Columns = []views.ValueColumn{{Name: "Member"}}
	case "list":
		vm.Columns = []views.ValueColumn{{Name: "Index", Narrow: true}, {Name: "Element"}}
	case "zset":
		// ZRANGE by rank: rank 1 is the lowest score, whatever order
		// the application reads its board in.
		vm.Columns = []views.ValueColumn{{Name: "Rank (lowest score first)", Narrow: true}, {Name: "Member"}, {Name: "Score", Narrow: true}}
	case "stream":
		vm.Columns = []views.ValueColumn{{Name: "Entry ID"}, {Name: "Fields"}}
	}
	for _, e := range pg.Elements {
		var row []views.ValueCell
		switch pg.Type {
		case "hash":
			row = []views.ValueCell{cell(e.Name), cell(e.Value)}
		case "set":
			row = []views.ValueCell{cell(e.Name)}
		case "list":
			row = []views.ValueCell{{Text: format.Count(e.Index)}, cell(e.Value)}
		case "zset":
			row = []views.ValueCell{{Text: format.Count(e.Index + 1)}, cell(e.Name), {Text: format.Score(e.Score)}}
		case "stream":
			var b strings.Builder
			note := ""
			for i := 0; i+1 < len(e.Fields); i += 2 {
				if i > 0 {
					b.WriteString("  ")
				}
				f, val := cell(e.Fields[i]), cell(e.Fields[i+1])
				b.WriteString(f.Text + " = " + val.Text)
				if f.Note != "" || val.Note != "" {
					note = "values cut"
				}
			}
			row = []views.ValueCell{cell(e.Name), {Text: b.String(), Note: note}}
		}
		vm.Rows = append(vm.Rows, row)
	}
	// A GET form's hidden input is sent as the browser decodes it: only a
	// key that is UTF-8 survives the round trip.
	formable := utf8.ValidString(key) && route.Linkable(key)
	if formable {
		vm.FormAction, vm.FormKey = route.KeyPath(conn.Name, db), key
	}
	if pg.Scanned {
		vm.Filterable, vm.Filter = formable, views.ValidText(v.Filter)
		vm.PageNote = format.Size(int64(len(pg.Elements)), pg.Type) + " on this scan page"
		if v.Filter != "" {
			vm.PageNote += ", containing “" + views.EscapeName(v.Filter) + "”"
		}
		vm.PageNote += " (a scan page's size varies, and one may appear on two pages)"
	} else if len(pg.Elements) > 0 {
		vm.Jumpable = formable && pg.Type != "stream"
		if pg.Type == "stream" {
			vm.PageNote = format.Plural(int64(len(pg.Elements)), "entry", "entries") + " of " + format.Count(pg.Length)
		} else {
			first := pg.Elements[0].Index
			vm.PageNote = fmt.Sprintf("%s–%s of %s", format.Count(first+1), format.Count(first+int64(len(pg.Elements))), format.Count(pg.Length))
		}
	} else {
		vm.Jumpable = formable && pg.Type != "stream" && pg.Length > 0
		vm.PageNote = "Nothing here: the window is past the end."
	}
	if v.At != "" {
		vm.First = link("")
	}
	if pg.Prev != "" && pg.Prev != "0" {
		vm.Prev = link(pg.Prev)
	}
	if pg.Next != "" {
		vm.Next = link(pg.Next)
	}
	return vm, nil
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

// stringVM shows the start of a string as text, hex or pretty JSON. Bytes
// that are not UTF-8 are binary: hex unless text is asked for, where they
// read as \xNN.
func stringVM(vm *views.ValueVM, pg value.Page, v route.Value, tab func(string) string) {
	vm.IsString = true
	raw := pg.String
	cut := int64(len(raw)) < pg.Length
	check := raw
	if cut { // the cut may split the last character
		for i := 0; i < utf8.UTFMax-1 && len(check) > 0 && !utf8.ValidString(check); i++ {
			check = check[:len(check)-1]
		}
	}
	binary := !utf8.ValidString(check)
	isJSON := !cut && !binary && json.Valid([]byte(raw))
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
		vm.Views = append(vm.Views, views.ValueTab{Name: n, Href: tab(n), Active: n == view})
	}
	var notes []string
	if binary {
		notes = append(notes, "Binary (not UTF-8).")
	}
	if cut {
		notes = append(notes, fmt.Sprintf("The first %s of %s.", format.ByteCount(int64(len(raw))), format.ByteCount(pg.Length)))
	}
	switch view {
	case "hex":
		h := raw
		if len(h) > maxHex {
			h = h[:maxHex]
			notes = append(notes, "Hex of the first "+format.ByteCount(maxHex)+".")
		}
		vm.Text = hex.Dump([]byte(h))
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
}

// escapeLines escapes each line, keeping the line breaks as breaks.
func escapeLines(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = views.EscapeName(l)
	}
	return strings.Join(lines, "\n")
}
