package linger

// Each calls fn with every running worker (lingering ones included), in no
// particular order. fn runs outside the pool's lock, so it may take the
// worker's own; a worker may stop meanwhile (its last state is still read).
func (p *Pool[K, V]) Each(fn func(K, V)) {
	p.mu.Lock()
	keys := make([]K, 0, len(p.m))
	vals := make([]V, 0, len(p.m))
	for k, e := range p.m {
		keys = append(keys, k)
		vals = append(vals, e.v)
	}
	p.mu.Unlock()
	for i := range keys {
		fn(keys[i], vals[i])
	}
}
