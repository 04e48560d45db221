package redisview

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/redis/go-redis/v9"
)

// SetDriverLogger routes go-redis's own log lines (dial retries while a
// server is down) to log at debug level; the connection monitor already
// reports each state change once, at info/warn.
func SetDriverLogger(log *slog.Logger) { redis.SetLogger(driverLogger{log}) }

type driverLogger struct{ log *slog.Logger }

func (d driverLogger) Printf(ctx context.Context, format string, v ...any) {
	d.log.Log(ctx, slog.LevelDebug, fmt.Sprintf(format, v...), "component", "go-redis")
}
