package redistest

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// MasterName is the name the test sentinel monitors its primary under.
const MasterName = "keydeck"

// Sentinel is a primary, its replica and one sentinel watching them, owned
// by a test. The sentinel declares the primary down after 500 ms and fails
// over on its own (quorum 1).
type Sentinel struct {
	t        testing.TB
	Primary  *Server // the primary at start
	Replica  *Server
	Sentinel *Server
}

// StartSentinel starts the three servers, waits until the replica is linked
// and the sentinel knows it, and stops everything at test end.
func StartSentinel(t testing.TB) *Sentinel {
	t.Helper()
	ctx := context.Background()
	s := &Sentinel{t: t, Primary: Start(t)}
	s.Replica = Start(t, "--replicaof", "127.0.0.1", strconv.Itoa(s.Primary.Port))
	rc := s.Replica.Client(0) // one client, not one per poll
	Eventually(t, 20*time.Second, "the replica's link to the primary is up", func() bool {
		txt, err := rc.Info(ctx, "replication").Result()
		return err == nil && strings.Contains(txt, "master_link_status:up")
	})

	bin, err := Binary()
	if err != nil {
		t.Fatal(err)
	}
	sn := &Server{t: t, bin: bin, dir: t.TempDir(), Port: FreePort(t)}
	sn.Addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(sn.Port))
	conf := filepath.Join(sn.dir, "sentinel.conf")
	body := fmt.Sprintf(`port %d
bind 127.0.0.1
dir %s
sentinel monitor %s 127.0.0.1 %d 1
sentinel down-after-milliseconds %[3]s 500
sentinel failover-timeout %[3]s 3000
sentinel parallel-syncs %[3]s 1
`, sn.Port, sn.dir, MasterName, s.Primary.Port)
	if err := os.WriteFile(conf, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	sn.argv = []string{conf, "--sentinel"}
	t.Cleanup(sn.Stop) // before start waits: a failed start is killed too
	sn.start()
	s.Sentinel = sn
	Eventually(t, 20*time.Second, "the sentinel knows the replica", func() bool {
		c := s.sentinelClient()
		defer c.Close()
		reps, err := c.Replicas(ctx, MasterName).Result()
		return err == nil && len(reps) == 1
	})
	return s
}

// sentinelClient is a client of the sentinel; the caller closes it.
func (s *Sentinel) sentinelClient() *redis.SentinelClient {
	return redis.NewSentinelClient(&redis.Options{Addr: s.Sentinel.Addr})
}

// URL is a redis+sentinel:// URL of database db through the sentinel.
func (s *Sentinel) URL(db int) string {
	return fmt.Sprintf("redis+sentinel://%s/%s/%d", s.Sentinel.Addr, MasterName, db)
}

// PrimaryAddr is the primary's address as the sentinel names it now.
func (s *Sentinel) PrimaryAddr() string {
	s.t.Helper()
	c := s.sentinelClient()
	defer c.Close()
	a, err := c.GetMasterAddrByName(context.Background(), MasterName).Result()
	if err != nil || len(a) != 2 {
		s.t.Fatalf("SENTINEL GET-MASTER-ADDR-BY-NAME: %v", err)
	}
	return net.JoinHostPort(a[0], a[1])
}

// KillPrimary stops the primary and waits until the sentinel has promoted
// the replica and the replica says it is a primary.
func (s *Sentinel) KillPrimary(d time.Duration) {
	s.t.Helper()
	old := s.PrimaryAddr()
	for _, n := range []*Server{s.Primary, s.Replica} {
		if n.Addr == old {
			n.Stop()
		}
	}
	ctx := context.Background()
	Eventually(s.t, d, "the sentinel promotes the replica", func() bool {
		sc := s.sentinelClient()
		a, err := sc.GetMasterAddrByName(ctx, MasterName).Result()
		_ = sc.Close()
		if err != nil || len(a) != 2 || net.JoinHostPort(a[0], a[1]) == old {
			return false
		}
		c := redis.NewClient(&redis.Options{Addr: net.JoinHostPort(a[0], a[1])})
		defer c.Close()
		txt, err := c.Info(ctx, "replication").Result()
		return err == nil && strings.Contains(txt, "role:master")
	})
}

// WaitReplicated waits until the primary's replica is online and has
// everything it wrote: a failover then loses no key.
func (s *Sentinel) WaitReplicated(d time.Duration) {
	s.t.Helper()
	ctx := context.Background()
	c := redis.NewClient(&redis.Options{Addr: s.PrimaryAddr()})
	defer c.Close()
	Eventually(s.t, d, "the replica is online and caught up", func() bool {
		txt, err := c.Info(ctx, "replication").Result()
		return err == nil && caughtUp(txt)
	})
}
