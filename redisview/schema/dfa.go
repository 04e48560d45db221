package schema

import (
	"encoding/binary"
	"slices"
	"sync"
	"sync/atomic"
)

// The matcher is a Thompson NFA over all patterns of one database,
// determinized lazily (as RE2 does): a DFA state is the set of NFA
// instructions alive after the bytes read so far, created the first time a
// key needs it and cached. In the steady state each byte of a key costs one
// byte-class lookup and one transition load, whatever the number of
// patterns.

type opcode uint8

const (
	opByte  opcode = iota // consume b
	opClass               // consume a byte of cls
	opSplit               // continue at out and out1 without consuming
	opMatch               // a pattern accepts here
)

type inst struct {
	op   opcode
	b    byte
	cls  Class
	out  uint32
	out1 uint32
	rank int32 // opMatch: the pattern's priority, lower wins
}

type dstate struct {
	insts  []uint32 // sorted consuming and match instructions
	winner int32    // rank of the best accepting pattern, or -1
	next   []atomic.Pointer[dstate]
}

// defaultMaxStates bounds each automaton's cache. Real key spaces need a
// few hundred states; the bound only matters for hostile or random keys,
// where flushing keeps memory flat at the price of recomputation.
const defaultMaxStates = 4096

type dfa struct {
	prog     []inst
	starts   []uint32   // entry instruction of each pattern
	classes  [256]uint8 // byte → equivalence class
	reps     []byte     // a representative byte per class
	families []*Family  // by rank

	mu        sync.Mutex
	cache     map[string]*dstate
	start     atomic.Pointer[dstate]
	dead      *dstate
	maxStates int
	flushes   atomic.Int64 // for tests
}

// newDFA compiles fams, which must be in priority order (index = rank).
func newDFA(fams []*Family, maxStates int) *dfa {
	d := &dfa{families: fams, maxStates: maxStates}
	for rank, f := range fams {
		d.starts = append(d.starts, uint32(len(d.prog)))
		d.compile(f.Pattern, int32(rank))
	}
	d.computeClasses()
	d.dead = &dstate{winner: -1}
	d.reset()
	return d
}

func (d *dfa) compile(p *Pattern, rank int32) {
	emit := func(in inst) uint32 {
		in.out = uint32(len(d.prog) + 1)
		d.prog = append(d.prog, in)
		return uint32(len(d.prog) - 1)
	}
	for _, s := range p.segs {
		if s.ph < 0 {
			for i := 0; i < len(s.lit); i++ {
				emit(inst{op: opByte, b: s.lit[i]})
			}
			continue
		}
		ph := p.phs[s.ph]
		if ph.Len > 0 {
			for range ph.Len {
				emit(inst{op: opClass, cls: ph.Class})
			}
			continue
		}
		// One or more: consume, then either loop back or go on.
		c := emit(inst{op: opClass, cls: ph.Class})
		sp := emit(inst{op: opSplit})
		d.prog[sp].out1 = c
	}
	d.prog = append(d.prog, inst{op: opMatch, rank: rank})
}

// computeClasses partitions bytes so that bytes no instruction can tell
// apart share a transition slot; states then need a few dozen slots, not 256.
func (d *dfa) computeClasses() {
	var sets [][4]uint64
	seen := map[[4]uint64]bool{}
	add := func(s [4]uint64) {
		if !seen[s] {
			seen[s] = true
			sets = append(sets, s)
		}
	}
	for _, in := range d.prog {
		switch in.op {
		case opByte:
			var s [4]uint64
			s[in.b/64] |= 1 << (in.b % 64)
			add(s)
		case opClass:
			add(classBytes[in.cls])
		}
	}
	var cls [256]int
	for _, s := range sets {
		remap := map[[2]int]int{}
		for b := range 256 {
			in := 0
			if s[b/64]&(1<<(b%64)) != 0 {
				in = 1
			}
			k := [2]int{cls[b], in}
			id, ok := remap[k]
			if !ok {
				id = len(remap)
				remap[k] = id
			}
			cls[b] = id
		}
	}
	n := 0
	for b := range 256 {
		n = max(n, cls[b]+1)
	}
	d.reps = make([]byte, n)
	seenClass := make([]bool, n)
	for b := range 256 {
		d.classes[b] = uint8(cls[b])
		if !seenClass[cls[b]] {
			seenClass[cls[b]] = true
			d.reps[cls[b]] = byte(b)
		}
	}
}

// reset empties the cache and rebuilds the start state. States already
// handed out stay valid: walkers holding them finish correctly, and the
// old graph is garbage once they let go.
func (d *dfa) reset() {
	d.cache = map[string]*dstate{}
	set := d.closure(d.starts)
	d.start.Store(d.state(set))
}

func (d *dfa) closure(from []uint32) []uint32 {
	var out []uint32
	seen := map[uint32]bool{}
	stack := slices.Clone(from)
	slices.Reverse(stack)
	for len(stack) > 0 {
		pc := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[pc] {
			continue
		}
		seen[pc] = true
		if in := d.prog[pc]; in.op == opSplit {
			stack = append(stack, in.out1, in.out)
			continue
		}
		out = append(out, pc)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// state returns the cached state for set, creating it; d.mu must be held
// (or the DFA not yet shared).
func (d *dfa) state(set []uint32) *dstate {
	if len(set) == 0 {
		return d.dead
	}
	key := make([]byte, 4*len(set))
	for i, pc := range set {
		binary.LittleEndian.PutUint32(key[4*i:], pc)
	}
	if s, ok := d.cache[string(key)]; ok {
		return s
	}
	s := &dstate{insts: set, winner: -1, next: make([]atomic.Pointer[dstate], len(d.reps))}
	for _, pc := range set {
		if in := d.prog[pc]; in.op == opMatch && (s.winner < 0 || in.rank < s.winner) {
			s.winner = in.rank
		}
	}
	d.cache[string(key)] = s
	return s
}

// step computes and caches the transition of s on byte class c.
func (d *dfa) step(s *dstate, c uint8) *dstate {
	d.mu.Lock()
	defer d.mu.Unlock()
	if n := s.next[c].Load(); n != nil {
		return n
	}
	b := d.reps[c]
	var next []uint32
	for _, pc := range s.insts {
		in := d.prog[pc]
		if (in.op == opByte && in.b == b) || (in.op == opClass && in.cls.accepts(b)) {
			next = append(next, in.out)
		}
	}
	if len(d.cache) >= d.maxStates {
		d.flushes.Add(1)
		d.reset()
	}
	n := d.state(d.closure(next))
	s.next[c].Store(n)
	return n
}

// run returns the rank of the pattern that wins key, or -1.
func (d *dfa) run(key string) int32 {
	s := d.start.Load()
	for i := 0; i < len(key); i++ {
		c := d.classes[key[i]]
		n := s.next[c].Load()
		if n == nil {
			n = d.step(s, c)
		}
		if n == d.dead {
			return -1
		}
		s = n
	}
	return s.winner
}
