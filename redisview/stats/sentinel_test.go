package stats

import (
	"context"
	"testing"
	"time"

	"github.com/keydeck/keydeck/internal/redistest"
)

// TestSentinelOverviewNamesThePrimaryAndTheFailover: the overview of a
// sentinel connection names the primary, its replica with its lag and
// the sentinels that agree; after the primary is killed it names the
// promoted replica and the failover it saw, on the same reader.
func TestSentinelOverviewNamesThePrimaryAndTheFailover(t *testing.T) {
	s := redistest.StartSentinel(t)
	ctx := context.Background()
	r := NewOverviewReader(openConn(t, s.URL(0)))
	// The replica may still be in its first sync (wait_bgsave) on a busy
	// machine: a read is taken once the primary says it is online (it
	// failed once in CI under the race detector).
	var ov Overview
	redistest.Eventually(t, 30*time.Second, "the replica is online", func() bool {
		ov = r.Read(ctx)
		return ov.Sentinel != nil && len(ov.Sentinel.Replicas) == 1 && ov.Sentinel.Replicas[0].State == "online"
	})
	st := ov.Sentinel
	if ov.Err != "" || st == nil || st.Err != "" {
		t.Fatalf("read: %q, sentinel %+v", ov.Err, st)
	}
	if st.Primary != s.Primary.Addr || st.Asked != s.Sentinel.Addr || st.Sentinels != 1 || st.Quorum != 1 || !st.CkQuorum.OK || st.LastFailover != nil {
		t.Fatalf("sentinel: %+v", st)
	}
	if len(st.Replicas) != 1 || st.Replicas[0].Addr != s.Replica.Addr || !st.Replicas[0].LagBytes.OK || !st.Replicas[0].LagSec.OK || st.Replicas[0].State != "online" {
		t.Fatalf("replicas: %+v", st.Replicas)
	}
	s.KillPrimary(30 * time.Second)
	redistest.Eventually(t, 30*time.Second, "the overview names the promoted replica and the failover", func() bool {
		ov = r.Read(ctx)
		return ov.Sentinel != nil && ov.Sentinel.Primary == s.Replica.Addr && ov.Err == ""
	})
	f := ov.Sentinel.LastFailover
	if f == nil || f.From != s.Primary.Addr || f.To != s.Replica.Addr || f.At.IsZero() {
		t.Fatalf("last failover: %+v", f)
	}
}
