package server

import (
	"context"
	"github.com/keydeck/keydeck/redisview"
	"strconv"
	"strings"
	"time"
)

// OwnClientName is the client name Keydeck's connections set (CLIENT
// SETNAME, redisview/conn.go): how the client list, the slowlog and the
// kill-client action tell Keydeck's own connections from the
// application's.
const OwnClientName = "keydeck"

// Client is one connection of CLIENT LIST.
type Client struct {
	ID    int64
	Addr  string
	LAddr string
	Name  string
	User  string
	DB    int
	Age   time.Duration
	Idle  time.Duration
	Flags string // "N" plain, "S" replica, "M" primary, "P" Pub/Sub, "x" MULTI, …
	Cmd   string // the last command run ("client|list")
	QBuf  int64  // query buffer, bytes
	OMem  int64  // output buffer memory, bytes
	// TotMem is all the memory the connection holds, bytes; -1 when the
	// server does not say (before Redis 6).
	TotMem int64
	Sub    int64 // channels subscribed
	PSub   int64 // patterns subscribed
	// Own: one of Keydeck's connections (named OwnClientName).
	Own bool
}

// Clients reads CLIENT LIST: every connection of the server. The reply is
// one line per connection, read whole: a server has as many lines as
// clients, bounded by maxclients.
func Clients(ctx context.Context, srv redisview.Server) ([]Client, error) {
	c := srv.Client()
	txt, err := c.ClientList(ctx).Result()
	if err != nil {
		return nil, refusal("CLIENT LIST", err)
	}
	return ParseClientList(txt), nil
}

// ClientByID reads one connection (CLIENT LIST ID id); ok is false when
// the server has no connection of that id.
func ClientByID(ctx context.Context, srv redisview.Server, id int64) (Client, bool, error) {
	c := srv.Client()
	txt, err := c.Do(ctx, "CLIENT", "LIST", "ID", strconv.FormatInt(id, 10)).Text()
	if err != nil {
		return Client{}, false, refusal("CLIENT LIST ID", err)
	}
	for _, cl := range ParseClientList(txt) {
		if cl.ID == id {
			return cl, true, nil
		}
	}
	return Client{}, false, nil
}

// ParseClientList parses CLIENT LIST's reply: one line per client of
// space-separated name=value fields (a client name cannot hold a space).
// Fields it does not know are skipped, and one it cannot read left zero.
func ParseClientList(txt string) []Client {
	var out []Client
	for _, line := range strings.Split(txt, "\n") {
		line = strings.TrimRight(line, "\r")
		if line == "" {
			continue
		}
		out = append(out, parseClient(line))
	}
	return out
}

func parseClient(line string) Client {
	cl := Client{TotMem: -1}
	num := func(v string) int64 { n, _ := strconv.ParseInt(v, 10, 64); return n }
	for _, f := range strings.Split(line, " ") {
		k, v, _ := strings.Cut(f, "=")
		switch k {
		case "id":
			cl.ID = num(v)
		case "addr":
			cl.Addr = v
		case "laddr":
			cl.LAddr = v
		case "name":
			cl.Name = v
		case "user":
			cl.User = v
		case "db":
			cl.DB = int(num(v))
		case "age":
			cl.Age = time.Duration(num(v)) * time.Second
		case "idle":
			cl.Idle = time.Duration(num(v)) * time.Second
		case "flags":
			cl.Flags = v
		case "cmd":
			cl.Cmd = v
		case "qbuf":
			cl.QBuf = num(v)
		case "omem":
			cl.OMem = num(v)
		case "tot-mem":
			cl.TotMem = num(v)
		case "sub":
			cl.Sub = num(v)
		case "psub":
			cl.PSub = num(v)
		}
	}
	cl.Own = cl.Name == OwnClientName
	return cl
}
