// Package people is who may use the console and what each person may do:
// the users file and its reload, password hashes, signed sessions and
// their revocation on every replica, CSRF tokens, sign-in attempt limits,
// and the signing secret the replicas share. A person's permission is an
// action.Level (the action layer checks it without knowing any of this).
// Sign-in state lives in the audit Redis so that several replicas agree;
// it is infrastructure, not part of the Redis domain Keydeck displays, and
// knows nothing of HTTP: handlers turn requests into calls here.
package people
