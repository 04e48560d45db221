package console

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/redisview"
)

// On is where a console line runs: one server of a connection (a cluster
// node) and one database of it. Handlers hold it instead of a client.
type On struct {
	cl    redis.UniversalClient
	conn  *redisview.Conn
	srv   redisview.Server
	cache string // the server's name in the table cache
	Node  redisview.ServerNode
	DB    int
}

// At resolves conn's server at node ("" its own server; on a cluster a
// node CLUSTER NODES lists, else redisview.ErrUnknownNode) and database
// db: a cluster node has database 0 only (ErrClusterDB).
func At(ctx context.Context, conn *redisview.Conn, node string, db int) (On, error) {
	srv, err := conn.Server(ctx, node)
	if err != nil {
		return On{}, err
	}
	cl, n := srv.Client(), srv.Node
	if conn.IsCluster() {
		if db != 0 {
			return On{}, fmt.Errorf("%w: a cluster has database 0 only, not %d", ErrClusterDB, db)
		}
	} else {
		cl = conn.DB(db)
	}
	return On{cl: cl, conn: conn, srv: srv, cache: conn.Name + "@" + n.Addr, Node: n, DB: db}, nil
}

// ErrClusterDB: a database other than 0 was asked of a cluster.
var ErrClusterDB = fmt.Errorf("no such database on a cluster")

// Table is the server's command table (DefaultTables).
func (o On) Table(ctx context.Context) (*Table, error) { return DefaultTables.Get(ctx, o.cache, o.cl) }

// Decide judges req on this server (Decide); req.DB is o's.
func (o On) Decide(ctx context.Context, t *Table, req Request) (Decision, error) {
	req.DB = o.DB
	return Decide(ctx, o.cl, t, req)
}

// How long a typed command's reply is awaited (and never longer than its
// context): a read the bounds let through answers well within ReadWait; a
// dangerous command (a sync FLUSHALL of millions of keys, DEBUG SLEEP) may
// take LongWait.
const (
	ReadWait = 10 * time.Second
	LongWait = 60 * time.Second
)

// Run runs a read on a client of its own that sends it once
// (redisview.Conn.Once): a reply that times out is an error, never a
// second send.
func (o On) Run(ctx context.Context, args []string) (Reply, error) {
	return o.once(ctx, args, ReadWait)
}

// RunLong runs a dangerous command once, waiting up to LongWait for its
// reply. An error that is not the server's reply means the reply was
// lost: the command may have run (action.Sent tells a failure to dial).
func (o On) RunLong(ctx context.Context, args []string) (Reply, error) {
	return o.once(ctx, args, LongWait)
}

func (o On) once(ctx context.Context, args []string, wait time.Duration) (Reply, error) {
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	cl := o.conn.Once(o.srv, o.DB, wait)
	defer cl.Close()
	return Run(ctx, cl, args)
}
