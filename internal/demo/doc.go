// Package demo is the embedded demo Keydeck serves when no Redis is named:
// three in-process Redis servers (eIsland, the LLM gateway, vertique)
// seeded with data in each system's key layout, and a traffic simulator
// that keeps them moving.
//
// The servers are miniredis instances, each wrapped by a host (host.go)
// that answers what a real Redis server tells its operators and miniredis
// does not, as Redis 7.0 answers it: INFO's sections, COMMAND from Redis's
// own command table (redistable.go), CLIENT LIST/INFO/KILL over the host's
// own listener (host_conns.go), CONFIG GET of every parameter and CONFIG
// SET of those the demo can change, SLOWLOG, LATENCY, MEMORY STATS and
// DOCTOR, XINFO — from the demo's own data and traffic, so Keydeck's panels
// show the same figures they show for Redis.
package demo
