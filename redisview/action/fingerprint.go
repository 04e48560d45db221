package action

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"hash"
	"strconv"
)

// fpAbsent is the fingerprint of a key that does not exist.
const fpAbsent = "absent"

// fingerprint identifies the exact state of a key: its type, its value (the
// DUMP payload, see contentDigest) and its expiry. Two
// reads give the same fingerprint only if nothing touched the key between
// them, which is what lets a confirmation, or an undo days later, refuse
// to act on a key that is no longer the one that was shown.
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
func (r *Runner) fingerprint(s State) string {
	if s.Member != nil {
		return r.memberFingerprint(s)
	}
	if !s.Exists() {
		return fpAbsent
	}
	var h hash.Hash
	prefix := "sha256:"
	if s.Sensitive {
		h, prefix = hmac.New(sha256.New, r.secret), "hmac:"
	} else {
		h = sha256.New()
	}
	h.Write([]byte("keydeck-fp-v1\x00" + s.Type + "\x00"))
	switch {
	case s.PTTL < 0:
		h.Write([]byte("persistent"))
	case s.expireAt > 0:
		h.Write([]byte("at:" + strconv.FormatInt(s.expireAt, 10)))
	default:
		h.Write([]byte("volatile"))
	}
	h.Write([]byte{0})
	h.Write(contentDigest(s.dump))
	return prefix + hex.EncodeToString(h.Sum(nil))
}
