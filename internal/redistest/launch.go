package redistest

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"time"

	"github.com/redis/go-redis/v9"
)

// Launch starts a redis-server outside a test (the benchmark commands) on
// a free loopback port with its files in dir. stop kills it.
func Launch(dir string, extra ...string) (addr string, stop func(), err error) {
	bin, err := Binary()
	if err != nil {
		return "", nil, err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	addr = l.Addr().String()
	l.Close()
	_, port, _ := net.SplitHostPort(addr)
	args := append([]string{"--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir}, extra...)
	cmd := exec.Command(bin, args...)
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	stop = func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }
	c := redis.NewClient(&redis.Options{Addr: addr})
	defer c.Close()
	for range 200 {
		if c.Ping(context.Background()).Err() == nil {
			return addr, stop, nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	stop()
	return "", nil, fmt.Errorf("redis-server did not start on %s", addr)
}
