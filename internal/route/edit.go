package route

import (
	"net/url"
	"strings"
)

// CreateKey previews creating a key in a database (POST, the database
// page's form): the action create-key, with the new name carried
// byte-exact (CreateForm).
const CreateKey = "/c/:conn/db/:db/create-key"

// CreateKeyURL is CreateKey for one database.
func CreateKeyURL(conn string, db int) string { return DatabaseURL(conn, db) + "/create-key" }

// Fields of the database page's Create key form.
const (
	CreateName    = "name"     // the new key's name
	CreateNameEnc = "name_enc" // how it is written: ArgsAsTyped, ArgsEscaped or ArgsBase64
)

// CreateForm is the Create key form: the new key's name, decoded to its
// bytes, and the action's arguments (arg.NAME, as ParseAction reads them,
// taken as sent).
type CreateForm struct {
	Name string
	Args map[string]string
}

// ParseCreate reads the Create key form. The name is never trimmed; an
// empty one, or one longer than MaxKey, is refused.
func ParseCreate(form url.Values) (CreateForm, error) {
	out := CreateForm{Args: map[string]string{}}
	name := map[string]string{"name": form.Get(CreateName)}
	if err := decodeArgs(form.Get(CreateNameEnc), name); err != nil {
		return out, err
	}
	out.Name = name["name"]
	if out.Name == "" || len(out.Name) > MaxKey {
		return out, badParam("Name the new key (1 byte to 64 KiB).")
	}
	for field, vals := range form {
		arg, ok := strings.CutPrefix(field, "arg.")
		switch {
		case !ok || len(vals) == 0:
		case len(vals) > 1:
			return out, badParam("The argument %q is given %d times.", arg, len(vals))
		default:
			out.Args[arg] = vals[0]
		}
	}
	textareaLines(form, out.Args)
	return out, nil
}
