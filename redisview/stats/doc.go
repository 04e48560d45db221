// Package stats measures servers and their databases for the overview and
// database pages: INFO parsing with fallbacks for users who may not run
// it, the per-connection overview with its sparkline history, and the
// per-database sweepers, rate-limited SCANs that count keys per family and
// find TTL problems, schema violations and big keys.
package stats
