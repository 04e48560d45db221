package redisview

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"strconv"
	"testing"
	"time"
)

// sniListener accepts TLS handshakes on loopback and reports the server
// name each client asked for (it has no certificate: every handshake
// fails once the name is read).
func sniListener(t *testing.T) (port int, names <-chan string) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	ch := make(chan string, 16)
	cfg := &tls.Config{GetConfigForClient: func(h *tls.ClientHelloInfo) (*tls.Config, error) {
		ch <- h.ServerName
		return nil, errors.New("no certificate")
	}}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_ = c.SetDeadline(time.Now().Add(2 * time.Second))
				_ = tls.Server(c, cfg).Handshake()
			}()
		}
	}()
	return l.Addr().(*net.TCPAddr).Port, ch
}

func askedName(t *testing.T, names <-chan string) string {
	t.Helper()
	select {
	case n := <-names:
		return n
	case <-time.After(5 * time.Second):
		t.Fatal("no TLS handshake reached the listener")
		return ""
	}
}

// TestTLSServerNamePerHost: a cluster's node and a sentinel's primary or
// sentinel are verified under the name of the host dialled, not the
// first one the URL names; an explicit ?tls_server_name= wins.
func TestTLSServerNamePerHost(t *testing.T) {
	port, names := sniListener(t)
	node := "localhost:" + strconv.Itoa(port) // another host than the URL's
	dial := func(in string) string {
		t.Helper()
		tgt, err := parseTarget(in)
		if err != nil {
			t.Fatal(err)
		}
		var d func(context.Context, string, string) (net.Conn, error)
		if tgt.sentinels != nil {
			d = failoverOptions(tgt.opts, tgt).Dialer
		} else {
			d = clusterOptions(tgt.opts, tgt).Dialer
		}
		if d == nil {
			t.Fatalf("%s: no dialer of its own: every host gets %q", in, tgt.opts.TLSConfig.ServerName)
		}
		if c, err := d(context.Background(), "tcp", node); err == nil {
			c.Close()
		}
		return askedName(t, names)
	}
	for _, tc := range []struct{ url, want string }{
		{"rediss://seed.example:7000", "localhost"},
		{"rediss+sentinel://s1.example:26379,s2.example:26379/m", "localhost"},
		{"rediss://seed.example:7000?tls_server_name=redis.internal", "redis.internal"},
		{"rediss+sentinel://s1.example:26379/m?tls_server_name=redis.internal", "redis.internal"},
	} {
		if got := dial(tc.url); got != tc.want {
			t.Errorf("%s: a node at %s asked as %q, want %q", tc.url, node, got, tc.want)
		}
	}
	if _, err := parseTarget("redis://h:1?tls_server_name=x"); err == nil {
		t.Error("tls_server_name without TLS: accepted")
	}
}

// TestOwnTrafficPerPrimary: connections to one sentinel-managed primary
// (two databases) share their own-traffic count, as the server counts
// them together; two primaries behind the same sentinels do not.
func TestOwnTrafficPerPrimary(t *testing.T) {
	r, err := NewRegistry([]ConnConfig{
		{Name: "a0", URL: "redis+sentinel://s1:26379/alpha/0"},
		{Name: "a1", URL: "redis+sentinel://s1:26379/alpha/1"},
		{Name: "b0", URL: "redis+sentinel://s1:26379/beta/0"},
	}, quietLog())
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	a0, a1, b0 := r.All()[0], r.All()[1], r.All()[2]
	if a0.own != a1.own || a0.own == b0.own {
		t.Fatalf("shared: alpha's two databases %v, alpha and beta %v", a0.own == a1.own, a0.own == b0.own)
	}
}
