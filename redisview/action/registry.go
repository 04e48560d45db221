package action

import (
	"cmp"
	"slices"
	"sync"
)

// registry holds every kind a package registered. Built-in kinds register
// themselves from their own files (init); a package adding a view adds
// its kinds the same way (Register in its init), and every Runner offers
// them, so adding a kind means adding a file, not editing a list.
var registry struct {
	sync.Mutex
	kinds []Kind
}

// Register adds a kind to every Runner made afterwards. It panics on a
// name registered twice: two kinds recorded under one name in the audit log
// could not be told apart.
func Register(k Kind) {
	registry.Lock()
	defer registry.Unlock()
	if slices.ContainsFunc(registry.kinds, func(o Kind) bool { return o.Name() == k.Name() }) {
		panic("action: kind " + k.Name() + " registered twice")
	}
	registry.kinds = append(registry.kinds, k)
}

// registered lists the registered kinds in the order a page offers them:
// by the role they need (support's first), then by name.
func registered() []Kind {
	registry.Lock()
	defer registry.Unlock()
	out := slices.Clone(registry.kinds)
	slices.SortStableFunc(out, func(a, b Kind) int {
		return cmp.Or(cmp.Compare(a.Requires(), b.Requires()), cmp.Compare(a.Name(), b.Name()))
	})
	return out
}
