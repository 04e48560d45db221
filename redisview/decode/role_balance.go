package decode

import (
	"math"
	"strconv"
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

func init() {
	registerBudget(schema.RoleBalance, budgetRole{order: 1, fill: fillBalance, rank: rankBalance})
}

func fillBalance(b *Budget, r BudgetRead) string {
	p, ok := r.Match.Family.Params.(*schema.BalanceParams)
	if !ok {
		return ""
	}
	if _, err := strconv.ParseFloat(r.Value, 64); err != nil {
		return "the value is not a decimal amount"
	}
	b.Amount, b.Unit = r.Value, p.Unit
	return ""
}

// rankBalance puts the least left first.
func rankBalance(b *Budget, _ time.Duration) float64 {
	f, err := strconv.ParseFloat(b.Amount, 64)
	if err != nil {
		return math.Inf(1)
	}
	return -f
}
