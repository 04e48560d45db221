// Package server reads what a Redis server says about itself, for the
// admin's server pages: INFO by section with units and explanations
// (info.go), MEMORY STATS and MEMORY DOCTOR (memory.go), CONFIG GET in
// groups with sensitive settings withheld (config.go, sensitive.go), the
// client list with Keydeck's own connections marked (clients.go), and the
// slowlog, latency and Pub/Sub readers beside them.
//
// Every reader takes the client of one server (redisview.Conn.Server: on a
// cluster, one node) and returns its own structs; it never writes (changes
// go through redisview/action: config-set, kill-client). A command the
// server refuses (an ACL without CONFIG, a managed Redis that renamed it)
// comes back as an error saying so (Refused), so that one panel degrades
// and the rest of the page still shows.
//
// Sensitive settings — passwords, the users a replica authenticates as,
// ACL and TLS key file paths (SensitiveConfig) — are never read out: CONFIG
// GET * is filtered before anything leaves this package, and the action
// kinds refuse to read or write them.
package server
