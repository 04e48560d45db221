package redisview

import (
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// ErrNotSentinel: the connection does not follow a primary through sentinels.
var ErrNotSentinel = errors.New("not a Sentinel connection")

// SentinelReplica is one replica as a sentinel and the primary see it.
type SentinelReplica struct {
	Addr  string
	Flags string // the sentinel's flags ("slave", "s_down,slave" …)
	// Link is the replica's link to its primary as the sentinel saw it
	// (master-link-status: "ok", "err").
	Link string
	// Offset is the sentinel's slave-repl-offset; -1 when not given.
	Offset int64
	// LastOKPingMs: how long ago it last answered the sentinel's PING.
	LastOKPingMs int64
}

// SentinelReport is one reading of a sentinel-managed primary.
type SentinelReport struct {
	Master string // the master name
	// Asked is the sentinel that answered; Unanswered the ones tried
	// before it, with why.
	Asked      string
	Unanswered []string
	// Primary is the primary's address as the sentinel names it now.
	Primary      string
	PrimaryFlags string
	// Quorum is how many sentinels must agree the primary is down;
	// Sentinels how many the asked one knows (itself included).
	Quorum, Sentinels int
	// CkQuorum is SENTINEL CKQUORUM's answer, or why there is none.
	CkQuorum    string
	CkQuorumErr string
	Replicas    []SentinelReplica
	// PrimaryInfo is the primary's INFO replication (its replicas'
	// offsets and lag), read through the connection's own client;
	// PrimaryErr says why not.
	PrimaryInfo string
	PrimaryErr  string
}

// ReadSentinel asks the connection's sentinels, in order until one
// answers, about its primary (SENTINEL MASTER, REPLICAS, SENTINELS,
// CKQUORUM; bounded replies: one entry per node), and the primary for its
// INFO replication. Each command is bounded by timeout. Sentinel commands
// reach no data server: they are not counted in the data server's own
// traffic, which counts the commands that server runs (the INFO is).
func ReadSentinel(ctx context.Context, c *Conn, timeout time.Duration) (SentinelReport, error) {
	if c.target.sentinels == nil {
		return SentinelReport{}, ErrNotSentinel
	}
	rep := SentinelReport{Master: c.target.master}
	pool := sentinelPoolOf(c)
	var lastErr error
	for _, addr := range c.target.sentinels {
		sc := pool.client(addr)
		m, err := withTimeout(ctx, timeout, func(ctx context.Context) (map[string]string, error) {
			return sc.Master(ctx, rep.Master).Result()
		})
		if err != nil {
			lastErr = err
			rep.Unanswered = append(rep.Unanswered, addr+": "+c.SafeErr(err))
			continue
		}
		rep.Asked = addr
		rep.Primary = net.JoinHostPort(m["ip"], m["port"])
		rep.PrimaryFlags = m["flags"]
		rep.Quorum, _ = strconv.Atoi(m["quorum"])
		others, _ := strconv.Atoi(m["num-other-sentinels"])
		rep.Sentinels = others + 1
		reps, err := withTimeout(ctx, timeout, func(ctx context.Context) ([]map[string]string, error) {
			return sc.Replicas(ctx, rep.Master).Result()
		})
		if err == nil {
			for _, r := range reps {
				sr := SentinelReplica{Addr: net.JoinHostPort(r["ip"], r["port"]), Flags: r["flags"], Link: r["master-link-status"], Offset: -1}
				if v, err := strconv.ParseInt(r["slave-repl-offset"], 10, 64); err == nil {
					sr.Offset = v
				}
				sr.LastOKPingMs, _ = strconv.ParseInt(r["last-ok-ping-reply"], 10, 64)
				rep.Replicas = append(rep.Replicas, sr)
			}
		}
		ck, err := withTimeout(ctx, timeout, func(ctx context.Context) (string, error) {
			return sc.CkQuorum(ctx, rep.Master).Result()
		})
		if err != nil {
			rep.CkQuorumErr = Refusal("SENTINEL CKQUORUM", err)
		} else {
			rep.CkQuorum = ck
		}
		break
	}
	if rep.Asked == "" {
		return rep, lastErr
	}
	info, err := withTimeout(ctx, timeout, func(ctx context.Context) (string, error) {
		return c.Client().Info(ctx, "replication").Result()
	})
	if err != nil {
		rep.PrimaryErr = c.SafeErr(err)
	} else {
		rep.PrimaryInfo = info
	}
	return rep, nil
}

func withTimeout[T any](ctx context.Context, d time.Duration, f func(context.Context) (T, error)) (T, error) {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	return f(ctx)
}

// sentinelPool is a sentinel connection's clients of its sentinels.
type sentinelPool struct {
	c       *Conn
	mu      sync.Mutex
	clients map[string]*redis.SentinelClient
}

var sentinelPools sync.Map // *Conn → *sentinelPool

func sentinelPoolOf(c *Conn) *sentinelPool {
	v, _ := sentinelPools.LoadOrStore(c, &sentinelPool{c: c, clients: map[string]*redis.SentinelClient{}})
	return v.(*sentinelPool)
}

func (p *sentinelPool) client(addr string) *redis.SentinelClient {
	p.mu.Lock()
	defer p.mu.Unlock()
	if cl := p.clients[addr]; cl != nil {
		return cl
	}
	o := p.c.opts
	cl := redis.NewSentinelClient(&redis.Options{
		Addr: addr, Password: p.c.target.sentinelPwd, TLSConfig: o.TLSConfig,
		Dialer:      hostTLSDialer(o, p.c.target),
		DialTimeout: o.DialTimeout, ReadTimeout: o.ReadTimeout, WriteTimeout: o.WriteTimeout,
		MaxRetries: -1, PoolSize: 1, ClientName: o.ClientName, DisableIdentity: true,
	})
	p.clients[addr] = cl
	return cl
}

func (p *sentinelPool) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for a, cl := range p.clients {
		_ = cl.Close()
		delete(p.clients, a)
	}
}

// ReplicaLag is one replica line of a primary's INFO replication
// ("slave0:ip=…,port=…,state=online,offset=…,lag=…").
type ReplicaLag struct {
	Addr   string
	State  string
	Offset int64
	LagSec int64 // seconds since its last acknowledgement; -1 when not given
}

// ParseReplicas reads a primary's INFO replication: its replication offset
// and each replica's line.
func ParseReplicas(info string) (offset int64, ok bool, reps []ReplicaLag) {
	for _, line := range strings.Split(info, "\n") {
		line = strings.TrimRight(line, "\r")
		if v, found := strings.CutPrefix(line, "master_repl_offset:"); found {
			if n, err := strconv.ParseInt(v, 10, 64); err == nil {
				offset, ok = n, true
			}
			continue
		}
		k, v, found := strings.Cut(line, ":")
		if !found || !strings.HasPrefix(k, "slave") {
			continue
		}
		if _, err := strconv.Atoi(k[len("slave"):]); err != nil {
			continue
		}
		r := ReplicaLag{LagSec: -1}
		var ip, port string
		for _, kv := range strings.Split(v, ",") {
			a, b, _ := strings.Cut(kv, "=")
			switch a {
			case "ip":
				ip = b
			case "port":
				port = b
			case "state":
				r.State = b
			case "offset":
				r.Offset, _ = strconv.ParseInt(b, 10, 64)
			case "lag":
				if n, err := strconv.ParseInt(b, 10, 64); err == nil {
					r.LagSec = n
				}
			}
		}
		r.Addr = net.JoinHostPort(ip, port)
		reps = append(reps, r)
	}
	return offset, ok, reps
}
