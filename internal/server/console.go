package server

import (
	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/redisview/action"
	"github.com/keydeck/keydeck/redisview/console"
)

// consoleKinds are the action kinds only a flag offers: the command
// console's dangerous commands (FLUSHDB, FLUSHALL, CONFIG RESETSTAT …) for admins, with
// --console-allow-dangerous; without it no Runner knows the kind, so no
// request, from a page or the API, can run one.
func consoleKinds(cfg Config) []action.Kind {
	if cfg.ConsoleAllowDangerous {
		return []action.Kind{console.DangerousKind{}}
	}
	return nil
}

// consoleHistory keeps each person's console lines beside the audit log.
func consoleHistory(audit *redis.Client) *console.History { return console.NewHistory(audit) }
