package action

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"hash"
	"strconv"
	"strings"
)

// fpAbsent is the fingerprint of a key that does not exist.
const fpAbsent = "absent"

// fingerprint identifies the exact state of a key: its exact name, its type,
// its value (the DUMP payload, see contentDigest) and its expiry. Two reads
// give the same fingerprint only if they read the same key and nothing
// touched it between them, which is what lets a confirmation, or an undo
// days later, refuse to act on a key that is no longer the one that was
// shown. The name is part of it so that a confirmation can never match
// another key holding the same value ("conf:\xff" beside "conf:\uFFFD").
//
// The expiry is the absolute PEXPIRETIME, so a TTL merely ticking down is
// not a change but someone setting a new TTL is. Servers before Redis 7
// cannot say it; there only "has a TTL" is compared.
//
// Non-sensitive keys use plain SHA-256: their DUMP is in the audit record
// anyway, and the fingerprint must be recomputable by any replica, years
// later, for undo. A sensitive value is often low-entropy (the hash of a
// six-digit code), and a plain hash of it would be brute-forced from a
// preview token; it is keyed with the runner's secret instead and never
// written to the audit log.
//
// A member-level state (State.Member, see MemberPlan) is fingerprinted by
// that member alone (memberFingerprint).
func (r *Runner) fingerprint(s State) string { return r.fingerprintV(s, 2) }

// Fingerprint versions: 2 binds the key name ("sha256/2:…"); 1, the
// unmarked "sha256:…" of records written before, did not. Undo accepts a
// recorded version-1 fingerprint (State.matches).
func (r *Runner) fingerprintV(s State, v int) string {
	if s.Member != nil {
		return r.memberFingerprint(s, v)
	}
	if !s.Exists() {
		return fpAbsent
	}
	h, prefix := r.fpHash(s, v)
	h.Write([]byte("keydeck-fp-v1\x00" + s.Type + "\x00"))
	if v >= 2 {
		writeName(h, s.Key)
	}
	switch {
	case s.PTTL < 0:
		h.Write([]byte("persistent"))
	case s.expireAt > 0:
		h.Write([]byte("at:" + strconv.FormatInt(s.expireAt, 10)))
	default:
		h.Write([]byte("volatile"))
	}
	h.Write([]byte{0})
	if s.snap != nil {
		h.Write(s.snap.digest()) // tagged: never equal to a DUMP's digest
	} else {
		h.Write(contentDigest(s.dump))
	}
	return prefix + hex.EncodeToString(h.Sum(nil))
}

func (r *Runner) fpHash(s State, v int) (hash.Hash, string) {
	var h hash.Hash
	prefix := "sha256"
	if s.Sensitive {
		h, prefix = hmac.New(sha256.New, r.secret), "hmac"
	} else {
		h = sha256.New()
	}
	if v >= 2 {
		prefix += "/" + strconv.Itoa(v)
	}
	return h, prefix + ":"
}

// writeName hashes a name length-prefixed, so no name can run into the
// bytes that follow it.
func writeName(h hash.Hash, name string) {
	h.Write([]byte(strconv.Itoa(len(name)) + ":"))
	h.Write([]byte(name))
	h.Write([]byte{0})
}

// fingerprints sets s's fingerprint, and the version-1 one where a recorded
// fingerprint may still be of that version.
func (r *Runner) fingerprints(s *State) {
	s.fp = r.fingerprint(*s)
	s.fpLegacy = r.fingerprintV(*s, 1)
}

// matches reports whether recorded (a fingerprint from a token or an audit
// record) is of this state.
func (s State) matches(recorded string) bool {
	if recorded == s.fp {
		return true
	}
	legacy := strings.HasPrefix(recorded, "sha256:") || strings.HasPrefix(recorded, "hmac:")
	return legacy && s.fpLegacy != "" && recorded == s.fpLegacy
}
