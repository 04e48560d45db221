// Package signin is Keydeck's own sign-in state, kept in the audit Redis so
// that several replicas agree: failed-attempt limits per account and per
// address, ended sessions and sign-out-everywhere cutoffs, and the signing
// secret the replicas share. It is infrastructure, not part of the Redis
// domain Keydeck displays.
package signin
