package console

import (
	"errors"
	"fmt"
	"math/big"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/views/format"
)

// shape says a reply's type and size, never its text: all that the audit
// record of a dangerous command keeps of its answer, which may hold data
// (DEBUG DIGEST, a module's reply) the audit log is not to hold.
func shape(v any, err error) string {
	if errors.Is(err, redis.Nil) {
		return "nil"
	}
	if err != nil {
		return fmt.Sprintf("an error of %s", format.Plural(int64(len(err.Error())), "byte", "bytes"))
	}
	switch x := v.(type) {
	case nil:
		return "nil"
	case string:
		// go-redis gives a status reply (OK) as a string too.
		return fmt.Sprintf("a string of %s", format.Plural(int64(len(x)), "byte", "bytes"))
	case int64:
		return "an integer"
	case float64:
		return "a double"
	case bool:
		return "a boolean"
	case *big.Int:
		return "a big number"
	case redis.Error:
		return fmt.Sprintf("an error of %s", format.Plural(int64(len(x.Error())), "byte", "bytes"))
	case []any:
		return fmt.Sprintf("an array of %s", format.Plural(int64(len(x)), "element", "elements"))
	case map[any]any:
		return fmt.Sprintf("a map of %s", format.Plural(int64(len(x)), "entry", "entries"))
	}
	return fmt.Sprintf("a %T", v)
}
