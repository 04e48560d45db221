package handlers

import "github.com/keydeck/keydeck/redisview/search"

// SetSearchLimits replaces the search's per-request limits until the
// returned function restores them.
func SetSearchLimits(l search.Limits) (restore func()) {
	old := searchLimits
	searchLimits = l
	return func() { searchLimits = old }
}

// SetSearchLive replaces the live search's limits until the returned
// function restores them.
func SetSearchLive(l search.Limits) (restore func()) {
	old := searchLive
	searchLive = l
	return func() { searchLive = old }
}
