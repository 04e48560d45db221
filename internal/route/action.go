package route

import (
	"net/url"
	"strconv"
	"strings"
)

// Action names an action and its target: the preview's parameters.
type Action struct {
	Kind string
	Conn string
	DB   int
	Key  string
	// Args are the kind's arguments, sent as arg.NAME.
	Args map[string]string
}

// PreviewURL is the action's preview. The target travels in the query,
// where percent-encoding carries the key's bytes exactly; a form posting to
// it may add the kind and arguments in its body.
func (a Action) PreviewURL() string {
	q := url.Values{"conn": {a.Conn}, "db": {strconv.Itoa(a.DB)}, "key": {a.Key}}
	if a.Kind != "" {
		q.Set("kind", a.Kind)
	}
	for name, v := range a.Args {
		q.Set("arg."+name, v)
	}
	return Preview + "?" + q.Encode()
}

// ParseAction reads an action from a form (query and body together).
// Arguments are bytes like key names (a member, a field, a banned name):
// they are taken exactly as sent, never trimmed; "twin " is not "twin".
// A kind that reads a value from one (a TTL) parses it itself. An
// argument given twice (in the query and the body, say) is refused. The
// form's enc field says how the arguments are written (decodeArgs).
func ParseAction(form url.Values) (Action, error) {
	db, err := ParseDB(form.Get("db"))
	if err != nil {
		return Action{}, err
	}
	a := Action{Kind: form.Get("kind"), Conn: form.Get("conn"), DB: db, Key: form.Get("key"), Args: map[string]string{}}
	for name, vals := range form {
		arg, ok := strings.CutPrefix(name, "arg.")
		switch {
		case !ok || len(vals) == 0:
		case len(vals) > 1:
			// Which one the person meant cannot be told.
			return Action{}, badParam("The argument %q is given %d times.", arg, len(vals))
		default:
			a.Args[arg] = vals[0]
		}
	}
	textareaLines(form, a.Args)
	if err := decodeArgs(form.Get("enc"), a.Args); err != nil {
		return Action{}, err
	}
	// A choice (a select's option, a ticked checkbox: choice.NAME) is a
	// word of the page's own, never typed: taken as sent, whatever enc.
	for name, vals := range form {
		arg, ok := strings.CutPrefix(name, "choice.")
		_, dup := a.Args[arg]
		switch {
		case !ok || len(vals) == 0:
		case len(vals) > 1 || dup:
			return Action{}, badParam("The argument %q is given more than once.", arg)
		default:
			a.Args[arg] = vals[0]
		}
	}
	return a, nil
}

// Argument encodings of an action form (its enc field): a text field
// carries only what a person can type as UTF-8 on one line, so a name with
// a newline or a byte that is not UTF-8 is pasted as the pages show it
// (escaped) or as base64.
const (
	ArgsAsTyped = "text"
	ArgsEscaped = "escaped"
	ArgsBase64  = "base64"
)

// decodeArgs turns the arguments, as sent in the encoding enc ("" is as
// typed), into their bytes.
func decodeArgs(enc string, args map[string]string) error {
	switch enc {
	case "", ArgsAsTyped:
		return nil
	case ArgsEscaped:
		for name, v := range args {
			b, err := UnescapeName(v)
			if err != nil {
				return badParam("The argument %q is not escaped as the pages show names: %v.", name, err)
			}
			args[name] = b
		}
	case ArgsBase64:
		for name, v := range args {
			b, ok := decodeB64(v)
			if !ok {
				return badParam("The argument %q is not base64 (standard or URL-safe, padded or not).", name)
			}
			args[name] = b
		}
	default:
		return badParam("The argument encoding %q is none of text, escaped and base64.", enc)
	}
	return nil
}

// TextareaLF names (repeated) the arguments a form asks for in a textarea:
// a browser sends a textarea's line breaks as CRLF whatever was typed, so
// those are turned back into the LF typed. A value that must hold a CR is
// sent in hex or base64.
const TextareaLF = "lf"

func textareaLines(form url.Values, args map[string]string) {
	for _, name := range form[TextareaLF] {
		if v, ok := args[name]; ok {
			args[name] = strings.ReplaceAll(v, "\r\n", "\n")
		}
	}
}
