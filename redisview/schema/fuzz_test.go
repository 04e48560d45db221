package schema

import (
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
)

// stressPack exercises what the seed packs do not: leading placeholders,
// fixed-length classes next to open ones, repeated literals, overlapping
// patterns of equal specificity.
const stressPack = `
name: stress
families:
  - {id: a, pattern: "a:{x}", type: string, ttl: any, domain: d, role: cache}
  - {id: b, pattern: "a:{x}:b", type: string, ttl: any, domain: d, role: cache}
  - {id: c, pattern: "a:{x:hex4}:{y:digits}", type: string, ttl: any, domain: d, role: cache}
  - {id: d, pattern: "{x}:z", type: string, ttl: any, domain: d, role: cache}
  - {id: e, pattern: "a:{x:segment}:{y:upper}:{z}", type: string, ttl: any, domain: d, role: cache}
  - {id: f, db: [1, 2], pattern: "{p:base64}=={q:alnum2}", type: string, ttl: any, domain: d, role: cache}
  - {id: g, pattern: "aa{x}aa", type: string, ttl: any, domain: d, role: cache}
  - {id: h, db: 1, pattern: "a{x}a{y}a", type: string, ttl: any, domain: d, role: cache}
  - {id: i, db: 2, pattern: "a:{x}:{y}", type: string, ttl: any, domain: d, role: cache}
  - {id: j, pattern: "n{x:digits3}", type: string, ttl: any, domain: d, role: cache}
`

type fuzzTarget struct {
	pack *Pack
	ref  *reference
	fast *Classifier // default cache
	tiny *Classifier // a cache so small it flushes all the time
}

var fuzzTargets = sync.OnceValue(func() []fuzzTarget {
	packs := Builtin()
	stress, err := Load("stress.yaml", []byte(stressPack))
	if err != nil {
		panic(err)
	}
	packs = append(packs, stress)
	var out []fuzzTarget
	for _, p := range packs {
		out = append(out, fuzzTarget{pack: p, ref: newReference(p), fast: NewClassifier(p), tiny: newClassifier(p, 3)})
	}
	return out
})

func checkAgainstReference(t *testing.T, tg fuzzTarget, c *Classifier, db int, key string) {
	t.Helper()
	want, wantVals := tg.ref.match(db, key)
	if f, _ := c.Classify(db, key); f != want {
		t.Fatalf("%s db %d %q: Classify %s, reference %s", tg.pack.Name, db, key, famID(f), famID(want))
	}
	m, ok := c.Match(db, key)
	if ok != (want != nil) || (ok && m.Family != want) {
		t.Fatalf("%s db %d %q: Match %s, reference %s", tg.pack.Name, db, key, famID(m.Family), famID(want))
	}
	if !ok {
		return
	}
	got := make([]string, len(m.Vars))
	for i, v := range m.Vars {
		got[i] = v.Raw
	}
	if !slices.Equal(got, wantVals) {
		t.Fatalf("%s db %d %q (%s): values %q, reference %q", tg.pack.Name, db, key, want.ID, got, wantVals)
	}
}

// FuzzClassify checks that the lazy DFA (with a normal and a constantly
// flushed cache) agrees with one regexp per pattern on the winning family
// and on every placeholder value.
func FuzzClassify(f *testing.F) {
	for _, tc := range keyCases {
		f.Add(uint8(tc.db), tc.key)
	}
	for _, k := range []string{"a:x", "a:x:b", "a:0f0f:12", "q:z", "a:b:C:d", "QUJD==x1", "aaaa", "aaaaa", "a1a2a", "a:1:2", "123", "aa:z"} {
		f.Add(uint8(1), k)
		f.Add(uint8(2), k)
	}
	f.Fuzz(func(t *testing.T, db uint8, key string) {
		if len(key) > 4096 {
			// Long keys only cost the reference regexps time; the
			// automaton's linearity is BenchmarkClassify's business.
			return
		}
		for _, tg := range fuzzTargets() {
			checkAgainstReference(t, tg, tg.fast, int(db%17), key)
			checkAgainstReference(t, tg, tg.tiny, int(db%17), key)
		}
	})
}

func famID(f *Family) string {
	if f == nil {
		return "no family"
	}
	return f.ID
}

// mutate makes keys near real ones: cut, extended, with bytes replaced.
func mutate(rng *rand.Rand, key string) string {
	b := []byte(key)
	switch rng.IntN(5) {
	case 0:
		if len(b) > 0 {
			b = b[:rng.IntN(len(b))]
		}
	case 1:
		b = append(b, ":x:"[rng.IntN(3)])
	case 2:
		if len(b) > 0 {
			b[rng.IntN(len(b))] = "a:0Z=\xff中"[rng.IntN(7)]
		}
	case 3:
		if len(b) > 0 {
			i := rng.IntN(len(b))
			b = append(b[:i], append([]byte(":"), b[i:]...)...)
		}
	}
	return string(b)
}

// Many goroutines share classifiers whose caches flush under them; run with
// -race. Every answer must still match the reference.
func TestClassifyConcurrent(t *testing.T) {
	targets := fuzzTargets()
	var keys []Key
	for _, tc := range keyCases {
		keys = append(keys, Key{tc.db, tc.key})
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(g), 7))
			for range 3000 {
				k := keys[rng.IntN(len(keys))]
				key := mutate(rng, k.Name)
				tg := targets[rng.IntN(len(targets))]
				checkAgainstReference(t, tg, tg.tiny, k.DB, key)
				checkAgainstReference(t, tg, tg.fast, k.DB, key)
			}
		}()
	}
	wg.Wait()
	var flushes int64
	for _, tg := range targets {
		for _, d := range append(slices.Clone(tg.tiny.byDB), tg.tiny.other) {
			if d != nil {
				flushes += d.flushes.Load()
			}
		}
	}
	if flushes == 0 {
		t.Error("the tiny caches never flushed; the test does not exercise flushing")
	}
}

// The cache stays bounded however many distinct keys go through.
func TestCacheBounded(t *testing.T) {
	p := BuiltinPack("eisland")
	c := newClassifier(p, 64)
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		b := make([]byte, 1+rng.IntN(40))
		for i := range b {
			b[i] = "server:wallpaper-list::ab1:"[rng.IntN(27)]
		}
		c.Classify(3, string(b))
	}
	d := c.byDB[3]
	d.mu.Lock()
	n := len(d.cache)
	d.mu.Unlock()
	if n > 64 {
		t.Errorf("cache holds %d states, bound 64", n)
	}
}
