package action

import (
	"math"
	"strconv"

	"github.com/keydeck/keydeck/redisview/decode"
	"github.com/keydeck/keydeck/redisview/schema"
)

// An edit must leave a key the application can still read, where the
// pack knows how it reads it: a key of the family's type, a token bucket's
// tokens and time as numbers, a Bucket4j state in its format, a counter
// as an integer. Anything else is refused before the preview, saying why;
// the pack's other roles are application data Keydeck does not judge.

// familyOf is the pack's family of key (nil: none, or no pack).
func familyOf(env Env, db int, key string) *schema.Family {
	if env.Conn == nil || env.Conn.Classifier() == nil {
		return nil
	}
	f, _ := env.Conn.Classifier().Classify(db, key)
	return f
}

func shapeRefusal(f *schema.Family, why string) error {
	return invalidf("keys of family %s (role %s) %s; the application could not read this value, so it is not written", f.ID, f.Role, why)
}

// checkTypeShape refuses to make key a typ where its family says otherwise.
func checkTypeShape(f *schema.Family, typ string) error {
	if f != nil && f.Type != "" && f.Type != typ {
		return shapeRefusal(f, "are of type "+f.Type+", not "+typ)
	}
	return nil
}

// checkStringShape judges a whole string value.
func checkStringShape(env Env, f *schema.Family, v string) error {
	if f == nil {
		return nil
	}
	switch f.Role {
	case schema.RoleBucket4j:
		if _, err := decode.DecodeBucket4j([]byte(v), env.Now); err != nil {
			return shapeRefusal(f, "hold a Bucket4j bucket state (BUCKET4J-STATE.md), and this value is not one ("+err.Error()+")")
		}
	case schema.RoleCounter, schema.RoleCounterWindow, schema.RoleQuota:
		if _, err := strconv.ParseInt(v, 10, 64); err != nil {
			return shapeRefusal(f, "hold an integer count (INCR)")
		}
	}
	return nil
}

// checkFieldShape judges one hash field's new value.
func checkFieldShape(f *schema.Family, field, v string) error {
	tb, ok := tokenBucket(f)
	if !ok {
		return nil
	}
	if (field == tb.TokensField || field == tb.TimeField) && !isNumber(v) {
		return shapeRefusal(f, "keep field "+strconv.Quote(field)+" as a number")
	}
	return nil
}

// checkHashShape judges a whole new hash: a token bucket needs both its
// numeric fields.
func checkHashShape(f *schema.Family, pairs [][2]string) error {
	tb, ok := tokenBucket(f)
	if !ok {
		return nil
	}
	seen := map[string]bool{}
	for _, p := range pairs {
		if err := checkFieldShape(f, p[0], p[1]); err != nil {
			return err
		}
		seen[p[0]] = true
	}
	for _, want := range []string{tb.TokensField, tb.TimeField} {
		if !seen[want] {
			return shapeRefusal(f, "have a field "+strconv.Quote(want)+" (a number)")
		}
	}
	return nil
}

func tokenBucket(f *schema.Family) (*schema.TokenBucketParams, bool) {
	if f == nil {
		return nil, false
	}
	tb, ok := f.Params.(*schema.TokenBucketParams)
	return tb, ok
}

func isNumber(v string) bool {
	x, err := strconv.ParseFloat(v, 64)
	return err == nil && !math.IsNaN(x) && !math.IsInf(x, 0)
}
