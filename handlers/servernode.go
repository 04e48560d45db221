package handlers

import (
	"github.com/labstack/echo/v4"
	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/internal/route"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/views"
)

// onServer is the server a per-server page (slowlog, latency, clients,
// server, console) reads: the request's ?node= on a cluster (a node
// CLUSTER NODES lists, else 404), the connection's own server otherwise.
type onServer struct {
	Client redis.UniversalClient // hand it to redisview; handlers send no command
	Node   redisview.ServerNode
	Picker []views.NodeOption // empty outside a cluster
}

// serverOf resolves the request's server on conn; pageURL builds the same
// page's URL for the picker (route.SlowlogURL, …).
func serverOf(c echo.Context, conn *redisview.Conn, pageURL func(string) string) (onServer, error) {
	ctx := c.Request().Context()
	addr := c.QueryParam(route.NodeParam)
	cl, node, err := conn.Server(ctx, addr)
	if err != nil {
		return onServer{}, err
	}
	s := onServer{Client: cl, Node: node}
	if !conn.IsCluster() {
		return s, nil
	}
	nodes, err := conn.ServerNodes(ctx)
	if err != nil {
		return onServer{}, err
	}
	for _, n := range nodes {
		s.Picker = append(s.Picker, views.NodeOption{Label: n.Label(), Href: route.OnNode(pageURL(conn.Name), n.Addr), Current: n.Addr == node.Addr})
	}
	return s, nil
}
