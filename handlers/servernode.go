package handlers

import (
	"github.com/labstack/echo/v4"

	"github.com/keydeck/keydeck/internal/route"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/views"
)

// onServer is the server a per-server page (slowlog, latency, clients,
// server, console) reads: the request's ?node= on a cluster (a node
// CLUSTER NODES lists, else 404), the connection's own server otherwise.
type onServer struct {
	Server redisview.Server // handed whole to redisview's readers
	Node   redisview.ServerNode
	Picker []views.NodeOption // empty outside a cluster
}

// serverOf resolves the request's server on conn; pageURL builds the same
// page's URL for the picker (route.SlowlogURL, …).
func serverOf(c echo.Context, conn *redisview.Conn, pageURL func(string) string) (onServer, error) {
	ctx := c.Request().Context()
	srv, err := conn.Server(ctx, c.QueryParam(route.NodeParam))
	if err != nil {
		return onServer{}, err
	}
	s := onServer{Server: srv, Node: srv.Node}
	if !conn.IsCluster() {
		return s, nil
	}
	nodes, err := conn.ServerNodes(ctx)
	if err != nil {
		return onServer{}, err
	}
	for _, n := range nodes {
		s.Picker = append(s.Picker, views.NodeOption{Label: n.Label(), Href: route.OnNode(pageURL(conn.Name), n.Addr), Current: n.Addr == srv.Node.Addr})
	}
	return s, nil
}
