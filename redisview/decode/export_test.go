package decode

import (
	"slices"

	"github.com/keydeck/keydeck/redisview/schema"
)

// SetBitcountChunk makes the bloom count cross chunk boundaries in tests;
// it returns the previous size.
func SetBitcountChunk(n int64) int64 { old := bitcountChunk; bitcountChunk = n; return old }

// HasReset reports whether role r registered a reset descriptor.
func HasReset(r schema.Role) bool {
	_, ok := resetRegistry[r]
	return ok
}

// RowRoles are the roles with a row reader (the limit and lock roles).
func RowRoles() []schema.Role {
	out := make([]schema.Role, 0, len(rowRegistry))
	for r := range rowRegistry {
		out = append(out, r)
	}
	slices.Sort(out)
	return out
}
