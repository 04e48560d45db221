package schema

import (
	"fmt"
	"strings"
	"testing"
)

// tenfold is the eisland pack with every family repeated under nine more
// literal prefixes: ten times the patterns, same keys to classify.
func tenfold(tb testing.TB) *Pack {
	e := BuiltinPack("eisland")
	p := &Pack{Name: "eisland10", byID: map[string]*Family{}}
	for copyN := range 10 {
		for _, f := range e.Families {
			g := *f
			g.index = len(p.Families)
			if copyN > 0 {
				g.ID = fmt.Sprintf("%s-%d", f.ID, copyN)
				pat, err := parsePattern(fmt.Sprintf("c%d/%s", copyN, f.Pattern.String()), nil)
				if err != nil {
					tb.Fatal(err)
				}
				g.Pattern = pat
			}
			p.Families = append(p.Families, &g)
		}
	}
	return p
}

var benchKeys = []struct {
	name string
	db   int
	key  string
}{
	{"short", 14, "mg:score:leaderboard:2048"},
	{"medium", 3, "server:wallpaper-list::a:b <i>c</i> 夕阳:dynamic:hot:12:50:us-west:true"},
	{"long", 3, "server:wallpaper-list::" + strings.Repeat("long keyword: with colons ", 40) + ":static:latest:1:20:cn-sh:false"},
	{"miss", 6, "auth:limit:login:failurez:" + strings.Repeat("x", 40)},
}

// BenchmarkClassify reports ns per key for the eisland pack (84 families)
// and a pack with ten times the families; the two should be equal.
func BenchmarkClassify(b *testing.B) {
	for _, pk := range []struct {
		name string
		pack *Pack
	}{{"eisland", BuiltinPack("eisland")}, {"eisland10x", tenfold(b)}} {
		c := NewClassifier(pk.pack)
		for _, k := range benchKeys {
			b.Run(fmt.Sprintf("%s/%s-%dB", pk.name, k.name, len(k.key)), func(b *testing.B) {
				if _, ok := c.Classify(k.db, k.key); ok == (k.name == "miss") {
					b.Fatalf("%q: unexpected result %v", k.key, ok)
				}
				b.SetBytes(int64(len(k.key)))
				b.ResetTimer()
				for b.Loop() {
					c.Classify(k.db, k.key)
				}
			})
		}
	}
}

// BenchmarkMatch adds placeholder extraction to classification.
func BenchmarkMatch(b *testing.B) {
	c := BuiltinPack("eisland").Classifier()
	for _, k := range benchKeys[:3] {
		b.Run(fmt.Sprintf("%s-%dB", k.name, len(k.key)), func(b *testing.B) {
			b.SetBytes(int64(len(k.key)))
			for b.Loop() {
				c.Match(k.db, k.key)
			}
		})
	}
}

// BenchmarkClassifyRegexpBaseline is what the automaton replaces: one
// regexp per family, tried in turn.
func BenchmarkClassifyRegexpBaseline(b *testing.B) {
	for _, pk := range []struct {
		name string
		pack *Pack
	}{{"eisland", BuiltinPack("eisland")}, {"eisland10x", tenfold(b)}} {
		ref := newReference(pk.pack)
		for _, k := range benchKeys[:3] {
			b.Run(fmt.Sprintf("%s/%s-%dB", pk.name, k.name, len(k.key)), func(b *testing.B) {
				b.SetBytes(int64(len(k.key)))
				for b.Loop() {
					ref.match(k.db, k.key)
				}
			})
		}
	}
}
