package schema

import (
	"encoding/base64"
	"fmt"
	"slices"
	"strings"
)

// Key builds the key for the given placeholder values, encoding base64
// placeholders (std padded for base64, URL-safe unpadded for base64url) so
// callers pass the plain value, as Match returns it. It is one of the keys
// Keys builds: the one to write.
func (p *Pattern) Key(vars map[string]string) (string, error) {
	vals := make([]string, len(p.phs))
	for i, ph := range p.phs {
		v, ok := vars[ph.Name]
		if !ok {
			return "", fmt.Errorf("no value for {%s}", ph.Name)
		}
		vals[i] = v
	}
	return p.keyFrom(vals)
}

func (p *Pattern) keyFrom(vals []string) (string, error) {
	var b strings.Builder
	for _, s := range p.segs {
		if s.ph < 0 {
			b.WriteString(s.lit)
			continue
		}
		ph, v := p.phs[s.ph], vals[s.ph]
		v = ph.encodings(v)[0]
		if err := ph.check(v); err != nil {
			return "", err
		}
		b.WriteString(v)
	}
	return b.String(), nil
}

// MaxKeys bounds the keys Keys builds for one set of values: every
// combination of the encodings of the pattern's base64 placeholders (three
// placeholders with four encodings each make 64).
const MaxKeys = 64

// Keys builds every key that may hold the given plain values: each base64
// placeholder in every encoding its class allows (Encodings), the key Key
// builds first, equal keys once. A reader that looks a value up derives
// them all, because the application that wrote the key may have used any
// of them. It fails when a placeholder can hold its value in no encoding,
// or when the combinations would be more than MaxKeys.
func (p *Pattern) Keys(vars map[string]string) ([]string, error) {
	for _, ph := range p.phs {
		if _, ok := vars[ph.Name]; !ok {
			return nil, fmt.Errorf("no value for {%s}", ph.Name)
		}
	}
	encs, err := p.ValueEncodings(vars)
	if err != nil {
		return nil, err
	}
	var out []string
	EachCombination(encs, func(pick []int) bool {
		var b strings.Builder
		for _, s := range p.segs {
			if s.ph < 0 {
				b.WriteString(s.lit)
			} else {
				b.WriteString(encs[s.ph][pick[s.ph]])
			}
		}
		if k := b.String(); !slices.Contains(out, k) {
			out = append(out, k)
		}
		return true
	})
	return out, nil
}

// ValueEncodings is, for each of p's placeholders, every encoding of its
// value in vals (Encodings), nil where vals gives it none. It fails when
// a value fits no encoding, or when the combinations would make more than
// MaxKeys keys.
func (p *Pattern) ValueEncodings(vals map[string]string) ([][]string, error) {
	encs := make([][]string, len(p.phs))
	n := 1
	for i, ph := range p.phs {
		v, ok := vals[ph.Name]
		if !ok {
			continue
		}
		if encs[i] = ph.Encodings(v); len(encs[i]) == 0 {
			return nil, ph.check(ph.encodings(v)[0])
		}
		if n *= len(encs[i]); n > MaxKeys {
			return nil, fmt.Errorf("the values' encodings make more than %d keys", MaxKeys)
		}
	}
	return encs, nil
}

// EachCombination calls fn with every combination of encs, an odometer:
// pick[i] indexes encs[i] (0 where encs[i] is nil), the first encodings
// first. It stops when fn returns false; fn must not keep pick.
func EachCombination(encs [][]string, fn func(pick []int) bool) {
	pick := make([]int, len(encs))
	for fn(pick) {
		i := len(pick) - 1
		for ; i >= 0; i-- {
			if pick[i]++; pick[i] < len(encs[i]) {
				break
			}
			pick[i] = 0
		}
		if i < 0 {
			return
		}
	}
}

// Encodings is every way the placeholder may hold the plain value v in a
// key, each one its class and length accept, equal encodings once; the
// one Key writes comes first, and none means it cannot hold v. A base64
// placeholder holds standard or URL-safe base64, padded or not: a seed
// that says "base64(account)" names no variant, and Java alone offers
// Base64.getEncoder() (standard, padded) and getUrlEncoder() with and
// without padding. base64url pins the URL-safe alphabet, padded or not.
// Every other class holds v itself.
func (ph Placeholder) Encodings(v string) []string {
	var out []string
	for _, e := range ph.encodings(v) {
		if ph.check(e) == nil && !slices.Contains(out, e) {
			out = append(out, e)
		}
	}
	return out
}

// encodings are the candidates of Encodings, unchecked, Key's first.
func (ph Placeholder) encodings(v string) []string {
	b := []byte(v)
	switch ph.Class {
	case ClassBase64:
		return []string{base64.StdEncoding.EncodeToString(b), base64.RawStdEncoding.EncodeToString(b),
			base64.URLEncoding.EncodeToString(b), base64.RawURLEncoding.EncodeToString(b)}
	case ClassBase64URL:
		return []string{base64.RawURLEncoding.EncodeToString(b), base64.URLEncoding.EncodeToString(b)}
	}
	return []string{v}
}

func (ph Placeholder) check(v string) error {
	if v == "" {
		return fmt.Errorf("{%s} is empty", ph.Name)
	}
	if ph.Len > 0 && len(v) != ph.Len {
		return fmt.Errorf("{%s} must be %d bytes, got %d", ph.Name, ph.Len, len(v))
	}
	for i := 0; i < len(v); i++ {
		if !ph.Class.accepts(v[i]) {
			return fmt.Errorf("{%s}: byte %q is not %s", ph.Name, v[i], ph.Class)
		}
	}
	return nil
}
