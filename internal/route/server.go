package route

import "net/url"

// Paths of a connection's server pages (issue 21): what the server itself
// says (slowlog, latency, clients, INFO and CONFIG, Pub/Sub) and the
// command console. On a cluster each reads one node, named by ?node=ADDR
// (ServerURL); without it, the connection's own server (a cluster's first
// primary).
const (
	Slowlog = "/c/:conn/slowlog"
	Latency = "/c/:conn/latency"
	Clients = "/c/:conn/clients"
	Server  = "/c/:conn/server"
	PubSub  = "/c/:conn/pubsub"
	Console = "/c/:conn/console"
)

// NodeParam is the query parameter naming a cluster node (host:port, as
// CLUSTER NODES gives it) on a server page.
const NodeParam = "node"

// SlowlogURL is a connection's slowlog page.
func SlowlogURL(conn string) string { return OverviewURL(conn) + "/slowlog" }

// LatencyURL is a connection's latency page.
func LatencyURL(conn string) string { return OverviewURL(conn) + "/latency" }

// ClientsURL is a connection's client list page.
func ClientsURL(conn string) string { return OverviewURL(conn) + "/clients" }

// ServerInfoURL is a connection's INFO, MEMORY and CONFIG page.
func ServerInfoURL(conn string) string { return OverviewURL(conn) + "/server" }

// PubSubURL is a connection's Pub/Sub page.
func PubSubURL(conn string) string { return OverviewURL(conn) + "/pubsub" }

// ConsoleURL is a connection's command console.
func ConsoleURL(conn string) string { return OverviewURL(conn) + "/console" }

// OnNode is a server page's URL (one of the above) for one cluster node;
// node "" is the connection's own server, and the URL is left as is.
func OnNode(pageURL, node string) string {
	if node == "" {
		return pageURL
	}
	return pageURL + "?" + NodeParam + "=" + url.QueryEscape(node)
}
