package decode_test

import (
	"testing"

	"github.com/keydeck/keydeck/redisview/decode"
	"github.com/keydeck/keydeck/redisview/schema"
)

// Every limit or lock role (a role with a row reader) registers what
// Reset limit does to its keys, and every limit-class family of the
// builtin packs is one a reset applies to: a new limit role that forgets
// its reset descriptor fails here, not silently on the Rate limits page.
func TestEveryLimitRoleHasReset(t *testing.T) {
	roles := decode.RowRoles()
	if len(roles) < 7 {
		t.Fatalf("row roles: %v", roles)
	}
	for _, r := range roles {
		if !decode.HasReset(r) {
			t.Errorf("role %s has a row reader but no reset descriptor (registerReset in its file)", r)
		}
	}
	for _, name := range []string{"eisland", "vertique", "gateway"} {
		p := schema.BuiltinPack(name)
		if p == nil {
			t.Fatalf("no builtin pack %s", name)
		}
		limits := 0
		for _, f := range p.Families {
			if decode.ClassOf(f) != decode.ClassLimit {
				continue
			}
			limits++
			if _, ok := decode.ResetOf(f); !ok {
				t.Errorf("%s: limit family %s (role %s) has no reset", name, f.ID, f.Role)
			}
		}
		if limits == 0 {
			t.Errorf("%s: no limit family", name)
		}
	}
}

// A lock is reset only when it holds its unlock time; a worker's lock is
// released, not reset.
func TestResetOfLock(t *testing.T) {
	held := &schema.Family{Role: schema.RoleLock, Params: &schema.LockParams{Value: "uuid"}}
	until := &schema.Family{Role: schema.RoleLock, Params: &schema.LockParams{Value: "epoch-ms"}}
	if _, ok := decode.ResetOf(held); ok {
		t.Error("a uuid lock has a reset")
	}
	if _, ok := decode.ResetOf(until); !ok {
		t.Error("an epoch-ms lock has no reset")
	}
	if _, ok := decode.ResetOf(nil); ok {
		t.Error("nil has a reset")
	}
}
