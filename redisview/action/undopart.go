package action

import (
	"context"
	"strings"

	"github.com/redis/go-redis/v9"
)

// damagedPart says what is wrong with a recorded part, or "".
func damagedPart(m MemberState) string {
	switch m.Kind {
	case PartZMember:
		if _, ok := parseScore(m.Score); m.Present && !ok {
			return "bad score"
		}
	case PartSMember, PartHField:
	case PartBits:
		if len(m.Offsets) == 0 || len(m.Offsets) > maxPartBits || len(m.Bits) != len(m.Offsets) || strings.Trim(m.Bits, "01") != "" {
			return "bits do not match their offsets"
		}
		for _, off := range m.Offsets {
			if off < 0 || off >= 1<<32 {
				return "offset out of range"
			}
		}
	default:
		return "unknown kind " + m.Kind
	}
	return ""
}

// restorePart queues the writes that put a part back.
func restorePart(ctx context.Context, tx redis.Pipeliner, key string, m *MemberState) {
	switch {
	case m.Kind == PartBits:
		for i, off := range m.Offsets {
			tx.SetBit(ctx, key, off, int(m.Bits[i]-'0'))
		}
	case m.Kind == PartSMember && m.Present:
		tx.SAdd(ctx, key, m.Name)
	case m.Kind == PartSMember:
		tx.SRem(ctx, key, m.Name)
	case m.Kind == PartHField && m.Present:
		tx.HSet(ctx, key, m.Name, m.Value)
	case m.Kind == PartHField:
		tx.HDel(ctx, key, m.Name)
	case m.Present:
		tx.Do(ctx, "zadd", key, m.Score, m.Name)
	default:
		tx.ZRem(ctx, key, m.Name)
	}
}
