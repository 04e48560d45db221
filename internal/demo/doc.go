// Package demo is the embedded demo Keydeck serves when no Redis is named:
// three in-process Redis servers (eIsland, the LLM gateway, vertique)
// seeded with data in each system's key layout, and a traffic simulator
// that keeps them moving.
//
// The servers are miniredis instances, each wrapped by a host (host.go)
// that answers what a real Redis server tells its operators and miniredis
// does not — INFO's server, memory, stats and keyspace sections, MEMORY
// USAGE with SAMPLES, CONFIG GET, SLOWLOG — from the demo's own data and
// traffic, so Keydeck's panels show the same figures they show for Redis.
package demo
