package main

import "testing"

// The truth is by construction: every key the benchmark writes must be
// classified into the family it is counted in (or none for the unmatched
// ones), and no two keys may share a name.
func TestBenchKeysClassifyAsTheirFamily(t *testing.T) {
	p, err := loadPack()
	if err != nil {
		t.Fatal(err)
	}
	cls := p.Classifier()
	seen := map[string]string{}
	n := counts(2_000_000)
	for fi, f := range families {
		for j := range min(n[fi], 3000) {
			k := f.name(j, mix(uint64(fi)+100, uint64(j)))
			if other, dup := seen[k]; dup {
				t.Fatalf("%s key %d: %q is also a key of %s", f.id, j, k, other)
			}
			seen[k] = f.id
			got, ok := cls.Classify(0, k)
			switch {
			case f.id == "" && ok:
				t.Fatalf("unmatched key %q classified as %s", k, got.ID)
			case f.id != "" && (!ok || got.ID != f.id):
				t.Fatalf("%q: classified %v, want %s", k, got, f.id)
			}
		}
	}
}

func TestCountsAddUpToKeys(t *testing.T) {
	for _, keys := range []int{1000, 999_999, 10_000_000} {
		var total, fixed int
		for i, c := range counts(keys) {
			total += c
			fixed += families[i].fixed
		}
		if total != keys+fixed {
			t.Errorf("counts(%d) add up to %d, want %d", keys, total, keys+fixed)
		}
	}
}
