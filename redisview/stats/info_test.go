package stats

import (
	"testing"
	"time"
)

func TestParseInfo(t *testing.T) {
	txt := "# Server\r\nredis_version:7.0.15\r\nuptime_in_seconds:42\r\n\r\n# Stats\r\ninstantaneous_ops_per_sec:17\r\nkeyspace_hits:3\r\n\r\n# Keyspace\r\ndb0:keys=10,expires=4,avg_ttl=1500\r\ndb14:keys=3,expires=0,avg_ttl=0\r\n"
	in := ParseInfo(txt)
	if v, _ := in.Get("redis_version"); v != "7.0.15" {
		t.Fatalf("version = %q", v)
	}
	if n, ok := in.Int("uptime_in_seconds"); !ok || n != 42 {
		t.Fatalf("uptime = %d %v", n, ok)
	}
	if f, ok := in.Float("instantaneous_ops_per_sec"); !ok || f != 17 {
		t.Fatalf("ops = %v %v", f, ok)
	}
	if _, ok := in.Int("used_memory"); ok {
		t.Fatal("absent field reported present")
	}
	ks := in.Keyspace()
	want := map[int]KeyspaceDB{0: {0, 10, 4, 1500 * time.Millisecond}, 14: {14, 3, 0, 0}}
	if len(ks) != len(want) {
		t.Fatalf("keyspace = %+v", ks)
	}
	for i, w := range want {
		if ks[i] != w {
			t.Fatalf("db%d = %+v, want %+v", i, ks[i], w)
		}
	}
}

func TestParseInfoEmptySections(t *testing.T) {
	tests := []struct {
		name        string
		txt         string
		hasKeyspace bool
	}{
		{"empty server still has the section", "# Server\nredis_version:7\n\n# Keyspace\n", true},
		{"embedded redis has none", "# Clients\nconnected_clients:1\n# Stats\ntotal_commands_processed:5\n", false},
		{"garbage", "nonsense without colon\n", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ParseInfo(tt.txt).Has("keyspace"); got != tt.hasKeyspace {
				t.Fatalf("Has(keyspace) = %v", got)
			}
		})
	}
}

// TestKeyspaceOfSumsPrimaries: every primary's INFO keyspace, summed per
// database; the average TTL weighted by the keys with an expiry.
func TestKeyspaceOfSumsPrimaries(t *testing.T) {
	got := KeyspaceOf([]string{
		"# Keyspace\r\ndb0:keys=10,expires=2,avg_ttl=1000\r\n",
		"# Keyspace\r\n",
		"# Keyspace\r\ndb0:keys=5,expires=6,avg_ttl=3000\r\ndb2:keys=1,expires=0,avg_ttl=0\r\n",
	})
	if len(got) != 2 || got[0].Keys != 15 || got[0].Expires != 8 || got[0].AvgTTL != 2500*time.Millisecond || got[2].Keys != 1 {
		t.Fatalf("%+v", got)
	}
}
