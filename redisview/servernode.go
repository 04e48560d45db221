package redisview

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// ErrUnknownNode: a per-server page named a server the connection does not
// have (on a cluster: an address CLUSTER NODES does not list). Pages answer
// it with 404; it is never dialled, so a URL cannot make Keydeck connect to
// an address of its choosing.
var ErrUnknownNode = errors.New("no such server in this connection")

// ServerNode is one server a per-server page (slowlog, latency, clients,
// server, console) can read: the one server of a standalone or Sentinel
// connection (Addr ""), or one node of a cluster.
type ServerNode struct {
	// Addr is the node's host:port as CLUSTER NODES gives it; "" for the
	// one server of a connection that is not a cluster.
	Addr string
	ID   string // cluster node id ("" outside a cluster)
	// Primary: serves slots (cluster) or is the connection's primary.
	Primary bool
	// Down: the cluster agreed it has failed (it may still be picked, and
	// then its page says it does not answer).
	Down bool
}

// Label names the node for a picker: "10.0.0.1:7000 (primary)".
func (n ServerNode) Label() string {
	if n.Addr == "" {
		return "this server"
	}
	role := "replica"
	if n.Primary {
		role = "primary"
	}
	if n.Down {
		role += ", failed"
	}
	return fmt.Sprintf("%s (%s)", n.Addr, role)
}

// ServerNodes lists the servers per-server pages can read: for a cluster,
// every node CLUSTER NODES names that has an address (primaries by first
// slot, each followed by its replicas); otherwise one ServerNode with Addr
// "". One CLUSTER NODES round trip on a cluster, none otherwise.
func (c *Conn) ServerNodes(ctx context.Context) ([]ServerNode, error) {
	cc, ok := c.Client().(*redis.ClusterClient)
	if !ok {
		return []ServerNode{{Primary: true}}, nil
	}
	lctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	txt, err := cc.ClusterNodes(lctx).Result()
	if err != nil {
		return nil, c.WrapErr(err)
	}
	var out []ServerNode
	for _, n := range parseClusterNodes(txt) {
		if n.Addr == "" {
			continue
		}
		out = append(out, ServerNode{Addr: n.Addr, ID: n.ID, Primary: n.Primary, Down: n.Fail})
	}
	return out, nil
}

// Server is one server of a connection, resolved by Conn.Server: the
// readers of per-server pages (redisview/server, the console, server
// actions) take it whole, so that a caller outside redisview (a handler)
// holds no Redis client.
type Server struct {
	cl   redis.UniversalClient
	Node ServerNode
}

// Client is the server's client, for redisview's own packages; handlers
// never call it (handlers/layering_test.go).
func (s Server) Client() redis.UniversalClient { return s.cl }

// ServerFor is a client already at one server (a test's, a standalone
// connection's) as a Server.
func ServerFor(cl redis.UniversalClient) Server {
	return Server{cl: cl, Node: ServerNode{Primary: true}}
}

// Server resolves one server of the connection, for the commands
// that read or change a server rather than keys (SLOWLOG, CLIENT, CONFIG,
// INFO, LATENCY, MEMORY STATS). addr "" is the connection's own server: the
// standalone server, the Sentinel's current primary, or a cluster's first
// primary. On a cluster any other addr must be a node CLUSTER NODES lists
// (ErrUnknownNode otherwise). The client is the connection's (its
// credentials, TLS and hooks, Keydeck's own traffic counted); do not close it.
func (c *Conn) Server(ctx context.Context, addr string) (Server, error) {
	cc, ok := c.Client().(*redis.ClusterClient)
	if !ok {
		if addr != "" {
			return Server{}, fmt.Errorf("%w: %q (the connection is not a cluster)", ErrUnknownNode, addr)
		}
		return ServerFor(c.Client()), nil
	}
	nodes, err := c.ServerNodes(ctx)
	if err != nil {
		return Server{}, err
	}
	for _, n := range nodes {
		if addr == n.Addr || (addr == "" && n.Primary) {
			return Server{cl: nodePoolOf(c, cc).client(n.Addr), Node: n}, nil
		}
	}
	if addr == "" {
		return Server{}, fmt.Errorf("%w: the cluster lists no primary with an address", ErrUnknownNode)
	}
	return Server{}, fmt.Errorf("%w: %q is not a node of this cluster", ErrUnknownNode, addr)
}
