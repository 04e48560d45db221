package decode

import (
	"strconv"
	"strings"
	"time"

	"github.com/keydeck/keydeck/redisview/schema"
)

// Lock is a SET NX lock: its value names the holder, or for an epoch-ms
// lock the time it unlocks.
type Lock struct {
	Holder   string    // the value as written
	Kind     string    // the pack's value kind: uuid, 1 or epoch-ms
	Until    time.Time // epoch-ms: the unlock time; zero otherwise
	TTL      time.Duration
	Expected bool // the value has the shape the pack says
}

func init() {
	register(schema.RoleLock, always(ClassLock), smallReader(func(in *Input, s string, d time.Duration) (any, error) {
		p, ok := in.Match.Family.Params.(*schema.LockParams)
		if !ok {
			return nil, nil
		}
		l := Lock{Holder: s, Kind: p.Value, TTL: d}
		switch p.Value {
		case "epoch-ms":
			if ms, err := strconv.ParseInt(s, 10, 64); err == nil && ms > 0 {
				l.Until, l.Expected = time.UnixMilli(ms).UTC(), true
			}
		case "1":
			l.Expected = s == "1"
		case "uuid":
			l.Expected = isUUID(s)
		}
		return &l, nil
	}))
}

func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i, r := range s {
		switch i {
		case 8, 13, 18, 23:
			if r != '-' {
				return false
			}
		default:
			if !strings.ContainsRune("0123456789abcdefABCDEF", r) {
				return false
			}
		}
	}
	return true
}
