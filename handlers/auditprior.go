package handlers

import (
	"encoding/base64"
	"math"
	"strconv"
	"strings"

	"github.com/keydeck/keydeck/redisview/action"
	"github.com/keydeck/keydeck/views"
	"github.com/keydeck/keydeck/views/format"
)

// priorTargets says, for an intent record, what it holds of each key
// before the change — the answer to "what did this delete?" without
// decoding a DUMP. Outcome records hold the state after, as fingerprints:
// nothing to show.
func priorTargets(r action.Record) []views.AuditTarget {
	if r.Phase != action.PhaseIntent {
		return nil
	}
	out := make([]views.AuditTarget, 0, len(r.Targets))
	for _, t := range r.Targets {
		vt := views.AuditTarget{Key: t.Key, Prior: priorWords(t)}
		if t.Member != nil {
			vt.Part = t.Member.Name
		}
		if t.PTTL >= 0 {
			vt.TTL = "TTL " + format.PTTL(t.PTTL)
		} else if t.PTTL == -1 {
			vt.TTL = format.PTTL(t.PTTL)
		}
		out = append(out, vt)
	}
	return out
}

// priorWords is what was recorded of one target, in words.
func priorWords(t action.Target) string {
	switch {
	case t.Sensitive || t.Prior == action.PriorSensitive:
		return "sensitive: not recorded"
	case t.Member != nil:
		return partWords(*t.Member)
	case t.Snapshot != nil:
		return t.Snapshot.Words()
	case t.Prior != "":
		out := "DUMP of " + format.Bytes(dumpLen(t.Prior))
		if t.Type != "" && t.Size > 0 {
			out += " (" + t.Type + ", " + format.Size(t.Size, t.Type) + ")"
		} else if t.Type != "" {
			out += " (" + t.Type + ")"
		}
		return out
	case t.Type == "none" || t.PTTL == -2:
		return "absent"
	}
	return "not recorded"
}

// partWords describes one member, field or set of bits before the change.
func partWords(m action.MemberState) string {
	switch m.Kind {
	case action.PartSMember:
		if m.Present {
			return "a member of the set"
		}
		return "not a member of the set"
	case action.PartHField:
		if m.Present {
			return "field value " + quoteValue(m.Value)
		}
		return "field absent"
	case action.PartBits:
		offs := make([]string, len(m.Offsets))
		for i, o := range m.Offsets {
			offs[i] = format.Count(o)
		}
		return "bits " + m.Bits + " at offsets " + strings.Join(offs, ", ")
	}
	if !m.Present {
		return "not on the sorted set"
	}
	score := m.Score
	if f, err := strconv.ParseFloat(m.Score, 64); err == nil && !math.IsNaN(f) {
		score = format.Score(f)
	}
	return "score " + score
}

// quoteValue quotes the start of a value from Redis, as Snapshot.Words
// does: Go quoting escapes what is not printable.
func quoteValue(v string) string {
	const show = 60
	if len(v) > show {
		return strconv.Quote(v[:show]) + "…"
	}
	return strconv.Quote(v)
}

// dumpLen is the length of a base64-encoded DUMP payload.
func dumpLen(b64 string) int64 {
	pad := len(b64) - len(strings.TrimRight(b64, "="))
	return int64(base64.StdEncoding.DecodedLen(len(b64)) - pad)
}
