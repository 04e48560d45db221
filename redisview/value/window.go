package value

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/keydeck/keydeck/redisview/schema"
)

func scanWindow(typ string, req Request, pg *Page) (window, error) {
	pg.Scanned = true
	cursor, skip, err := ScanPosition(req.At)
	if err != nil {
		return window{}, err
	}
	match := ""
	if req.Filter != "" {
		match = "*" + schema.EscapeGlob(req.Filter) + "*"
	}
	mode := "hscan"
	if typ == "set" {
		mode = "sscan"
	}
	return window{mode: mode, args: []any{cursor, match, maxScans, skip}}, nil
}

// ScanPosition reads a scan page's position: a cursor, or cursor:skip
// when the page before kept only part of the server's reply at that
// cursor (a listpack hash or set comes back whole whatever COUNT says),
// skip being the elements of that reply already shown. "" is the start.
func ScanPosition(at string) (cursor string, skip int, err error) {
	if at == "" {
		return "0", 0, nil
	}
	c, s, hasSkip := strings.Cut(at, ":")
	n, err := strconv.ParseUint(c, 10, 64)
	bad := err != nil || strconv.FormatUint(n, 10) != c
	if hasSkip {
		k, err := strconv.ParseUint(s, 10, 31)
		bad = bad || err != nil || strconv.FormatUint(k, 10) != s
		skip = int(k)
	}
	if bad {
		return "", 0, badRequest("%q is not a scan position (a cursor, a whole number, or cursor:rows already shown)", at)
	}
	return c, skip, nil
}

// maxOffset bounds an offset or rank: beyond any collection's length.
const maxOffset = 1 << 53

func offset(at string) (int64, error) {
	if at == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(at, 10, 64)
	if err != nil || n < 0 || n > maxOffset || strconv.FormatInt(n, 10) != at {
		return 0, badRequest("%q is not an offset (a whole number from 0)", at)
	}
	return n, nil
}

func rankWindow(mode string, req Request, pg *Page) (window, error) {
	start, err := offset(req.At)
	if err != nil {
		return window{}, err
	}
	pg.start = start
	return window{mode: mode, args: []any{start, start + PageSize - 1}}, nil
}

func scoreWindow(req Request, pg *Page) (window, error) {
	lo, loF, err := ParseScore(req.Min, "-inf")
	if err != nil {
		return window{}, badRequest("min: %s", err.Error())
	}
	hi, hiF, err := ParseScore(req.Max, "+inf")
	if err != nil {
		return window{}, badRequest("max: %s", err.Error())
	}
	if loF > hiF {
		return window{}, badRequest("min (%s) is above max (%s)", req.Min, req.Max)
	}
	off, err := offset(req.At)
	if err != nil {
		return window{}, err
	}
	pg.ByScore, pg.Min, pg.Max, pg.start = true, lo, hi, off
	return window{mode: "zscore", args: []any{lo, hi, off}}, nil
}

// ParseScore reads one end of a score window as ZRANGE BYSCORE takes it: a
// number, -inf or +inf, "(" before it for an exclusive bound; "" is def.
// It returns the bound as sent to Redis (the number normalised) and its
// value (for comparing the ends).
func ParseScore(s, def string) (string, float64, error) {
	if s == "" {
		s = def
	}
	ex := strings.HasPrefix(s, "(")
	t := strings.TrimPrefix(s, "(")
	var f float64
	var norm string
	switch strings.ToLower(t) {
	case "-inf":
		f, norm = math.Inf(-1), "-inf"
	case "+inf", "inf":
		f, norm = math.Inf(1), "+inf"
	default:
		v, err := strconv.ParseFloat(t, 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || strings.ContainsAny(t, "_xXpPnN") {
			return "", 0, fmt.Errorf("%q is not a score: give a number, -inf, +inf, or ( before a number for an exclusive bound", s)
		}
		f, norm = v, strconv.FormatFloat(v, 'g', -1, 64)
	}
	if ex {
		norm = "(" + norm
	}
	return norm, f, nil
}

// streamID reports a stream entry ID as XRANGE takes it: ms or ms-seq.
func streamID(s string) bool {
	ms, seq, hasSeq := strings.Cut(s, "-")
	ds := []string{ms}
	if hasSeq {
		ds = append(ds, seq)
	}
	for _, d := range ds {
		if n, err := strconv.ParseUint(d, 10, 64); err != nil || strconv.FormatUint(n, 10) != d {
			return false
		}
	}
	return true
}

func streamWindow(req Request, pg *Page) (window, error) {
	at, mode := "-", "xrange"
	if req.Desc {
		at, mode = "+", "xrev"
	}
	if req.At != "" {
		if !streamID(strings.TrimPrefix(req.At, "(")) {
			return window{}, badRequest("%q is not a stream entry ID (ms or ms-seq, ( before it to start after it)", req.At)
		}
		at = req.At
	}
	return window{mode: mode, args: []any{at, PageSize}}, nil
}

// window is one read a page needs: the script's mode and its arguments
// after mode, cap and count.
type window struct {
	mode string
	args []any
}
