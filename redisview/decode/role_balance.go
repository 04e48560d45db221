package decode

import (
	"strings"
	"time"

	"github.com/keydeck/keydeck/redisview/schema"
)

// Balance is a decimal amount of money or credit, as written.
type Balance struct {
	Amount string // the decimal as stored
	Unit   string
	Scale  int // decimal places the pack says the application writes
	TTL    time.Duration
}

func init() {
	register(schema.RoleBalance, always(ClassBudget), smallReader(func(in *Input, s string, d time.Duration) (any, error) {
		p, ok := in.Match.Family.Params.(*schema.BalanceParams)
		if !ok {
			return nil, nil
		}
		if !isDecimal(s) {
			return nil, notDecodable("the value is not a decimal amount")
		}
		return &Balance{Amount: s, Unit: p.Unit, Scale: p.Scale, TTL: d}, nil
	}))
}

func isDecimal(s string) bool {
	s = strings.TrimPrefix(s, "-")
	whole, frac, dot := strings.Cut(s, ".")
	digits := func(x string) bool {
		for _, r := range x {
			if r < '0' || r > '9' {
				return false
			}
		}
		return x != ""
	}
	return digits(whole) && (!dot || digits(frac))
}
