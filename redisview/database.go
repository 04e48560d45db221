package redisview

import (
	"context"
	"errors"
	"fmt"
	"strconv"
)

// ErrNoDatabase: the server has no database of that index (SELECT refuses
// it: the index is not below the server's `databases` setting).
var ErrNoDatabase = errors.New("no such database")

type noDatabase struct{ msg string }

func (e noDatabase) Error() string { return e.msg }
func (e noDatabase) Unwrap() error { return ErrNoDatabase }

// CheckDB asks the server whether database db exists, in one round trip:
// SELECT db, with CONFIG GET databases to say how many there are. It returns
// an error wrapping ErrNoDatabase when the server refuses the index, the
// round trip's error when the server could not be asked (IsConnErr), and nil
// otherwise — also when SELECT is refused for another reason (ACL), which
// says nothing about the database and leaves the page to report its reads.
func (c *Conn) CheckDB(ctx context.Context, db int) error {
	if c.IsCluster() {
		if db == 0 {
			return nil
		}
		return noDatabase{fmt.Sprintf("Connection %s is a Redis Cluster: it has database 0 only.", c.Name)}
	}
	p := c.CrossDBPipeline()
	sel := p.Select(ctx, db)
	cfg := p.ConfigGet(ctx, "databases")
	_, err := p.Exec(ctx)
	if IsConnErr(err) {
		return err
	}
	if !IsOutOfRange(sel.Err()) {
		return nil
	}
	msg := fmt.Sprintf("Connection %s has no database %d", c.Name, db)
	if n, err := strconv.Atoi(cfg.Val()["databases"]); cfg.Err() == nil && err == nil && n > 0 {
		msg += fmt.Sprintf(": its server has %d (db0 to db%d)", n, n-1)
	} else {
		msg += ": its server refuses SELECT " + strconv.Itoa(db)
	}
	return noDatabase{msg + "."}
}
