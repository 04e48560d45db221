package redistest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// LaunchCluster starts a Redis Cluster of n primaries without replicas
// outside a test (the benchmark commands): each node on free loopback
// ports (its own and its bus's), files under dir, joined by redis-cli
// --cluster create; it returns when every node says cluster_state:ok.
// extra are every node's config directives. stop kills every node.
func LaunchCluster(dir string, n int, extra ...string) (addrs []string, stop func(), err error) {
	bin, err := Binary()
	if err != nil {
		return nil, nil, err
	}
	cli, err := exec.LookPath("redis-cli")
	if err != nil {
		return nil, nil, errors.New("redis-cli not found: install redis-tools")
	}
	var cmds []*exec.Cmd
	stop = func() {
		for _, c := range cmds {
			_ = c.Process.Kill()
			_ = c.Wait()
		}
	}
	for i := range n {
		port, bus, err := twoFreePorts()
		if err != nil {
			stop()
			return nil, nil, err
		}
		nd := filepath.Join(dir, "node"+strconv.Itoa(i))
		if err := os.MkdirAll(nd, 0o700); err != nil {
			stop()
			return nil, nil, err
		}
		args := append([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", nd,
			"--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf", "--cluster-port", strconv.Itoa(bus)}, extra...)
		cmd := exec.Command(bin, args...)
		if err := cmd.Start(); err != nil {
			stop()
			return nil, nil, err
		}
		cmds = append(cmds, cmd)
		addrs = append(addrs, net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	}
	ctx := context.Background()
	for _, a := range addrs {
		if err := waitFor(30*time.Second, func() bool { return ping(ctx, a) }); err != nil {
			stop()
			return nil, nil, fmt.Errorf("redis-server on %s: %w", a, err)
		}
	}
	cctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	args := append([]string{"--cluster", "create"}, addrs...)
	args = append(args, "--cluster-replicas", "0", "--cluster-yes")
	if out, err := exec.CommandContext(cctx, cli, args...).CombinedOutput(); err != nil {
		stop()
		return nil, nil, fmt.Errorf("redis-cli --cluster create: %v\n%s", err, out)
	}
	if err := waitFor(60*time.Second, func() bool {
		for _, a := range addrs {
			if !nodeReady(ctx, a, n) {
				return false
			}
		}
		return true
	}); err != nil {
		stop()
		return nil, nil, fmt.Errorf("the cluster: %w", err)
	}
	return addrs, stop, nil
}

func twoFreePorts() (int, int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	for range 2 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, 0, err
		}
		ls = append(ls, l)
	}
	return ls[0].Addr().(*net.TCPAddr).Port, ls[1].Addr().(*net.TCPAddr).Port, nil
}

func ping(ctx context.Context, addr string) bool {
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	defer c.Close()
	return c.Ping(ctx).Err() == nil
}

// waitFor polls cond until it holds or d passes.
func waitFor(d time.Duration, cond func() bool) error {
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			return fmt.Errorf("not ready within %v", d)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return nil
}

// ClusterURL is a redis:// URL of a cluster's first node with the others
// as seeds.
func ClusterURL(addrs []string) string {
	u := "redis://" + addrs[0]
	var q []string
	for _, a := range addrs[1:] {
		q = append(q, "addr="+a)
	}
	if len(q) > 0 {
		u += "?" + strings.Join(q, "&")
	}
	return u
}
