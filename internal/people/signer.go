package people

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"time"
)

// Signer makes and checks HMAC-signed tokens. With the same secret every
// replica verifies what another signed, so nothing lives in one process.
type Signer struct{ key []byte }

func (s Signer) mac(purpose string, msg []byte) []byte {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte(purpose))
	m.Write([]byte{0})
	m.Write(msg)
	return m.Sum(nil)
}

// sign returns base64url(payload) "." base64url(mac).
func (s Signer) sign(purpose string, payload []byte) string {
	enc := base64.RawURLEncoding
	return enc.EncodeToString(payload) + "." + enc.EncodeToString(s.mac(purpose, payload))
}

var errBadToken = errors.New("invalid or tampered token")

// open verifies a signed token and returns its payload.
func (s Signer) open(purpose, token string) ([]byte, error) {
	p, m, ok := strings.Cut(token, ".")
	if !ok {
		return nil, errBadToken
	}
	enc := base64.RawURLEncoding
	payload, err1 := enc.DecodeString(p)
	mac, err2 := enc.DecodeString(m)
	if err1 != nil || err2 != nil || !hmac.Equal(mac, s.mac(purpose, payload)) {
		return nil, errBadToken
	}
	return payload, nil
}

// Seal encrypts and authenticates payload for purpose (AES-256-GCM under a
// key derived from the secret): base64url(nonce ‖ ciphertext). An action's
// confirmation names the member or field it acts on, which may be a
// sensitive board's member: the page carrying it must not spell it out.
func (s Signer) Seal(purpose string, payload []byte) string {
	aead := s.aead(purpose)
	nonce := make([]byte, aead.NonceSize())
	_, _ = rand.Read(nonce)
	return base64.RawURLEncoding.EncodeToString(aead.Seal(nonce, nonce, payload, []byte(purpose)))
}

// Unseal reverses Seal, refusing anything Seal did not make for purpose
// with this secret.
func (s Signer) Unseal(purpose, token string) ([]byte, error) {
	b, err := base64.RawURLEncoding.DecodeString(token)
	aead := s.aead(purpose)
	if err != nil || len(b) < aead.NonceSize() {
		return nil, errBadToken
	}
	n := aead.NonceSize()
	out, err := aead.Open(nil, b[:n], b[n:], []byte(purpose))
	if err != nil {
		return nil, errBadToken
	}
	return out, nil
}

func (s Signer) aead(purpose string) cipher.AEAD {
	block, err := aes.NewCipher(s.mac("seal key", []byte(purpose))) // 32 bytes: AES-256
	if err != nil {
		panic(err) // a 32-byte key is always valid
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		panic(err)
	}
	return aead
}

// Session is the signed cookie's content. The level is not in it: it is read
// from the users file on every request, so a demotion takes effect at once.
// The nonce is the session's id, by which a sign-out revokes it (see
// SessionStore); Issued lets "sign out everywhere" void every session of a
// user issued before a time.
type Session struct {
	User    string `json:"u"`
	Expires int64  `json:"e"` // epoch seconds
	Nonce   string `json:"n"`
	Issued  int64  `json:"i"` // epoch ms
	// Password ties the session to the password it was opened with (a MAC
	// of the account's hash): a new password, or a removed user added
	// again under the same name, does not inherit old sessions.
	Password string `json:"p"`
}

func RandomToken() string {
	b := make([]byte, 18)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

func (s Signer) NewSession(u User, ttl time.Duration, now time.Time) string {
	b, _ := json.Marshal(Session{User: u.Name, Expires: now.Add(ttl).Unix(), Nonce: RandomToken(),
		Issued: now.UnixMilli(), Password: s.PasswordBinding(u)})
	return s.sign("session", b)
}

// PasswordBinding names the account's current password hash without
// revealing anything about it (the cookie's payload is readable).
func (s Signer) PasswordBinding(u User) string {
	return base64.RawURLEncoding.EncodeToString(s.mac("session-password", u.hash)[:12])
}

func (s Signer) ReadSession(token string, now time.Time) (Session, error) {
	b, err := s.open("session", token)
	if err != nil {
		return Session{}, err
	}
	var ss Session
	if err := json.Unmarshal(b, &ss); err != nil || ss.User == "" {
		return Session{}, errBadToken
	}
	if now.Unix() >= ss.Expires {
		return Session{}, errors.New("session expired")
	}
	return ss, nil
}

// CSRFToken binds a form token to the browser's CSRF cookie and to who the
// request is from (bind: see Identity.CSRFBinding). Bound to the cookie
// alone, a kd_csrf cookie planted from a sibling host, with the anonymous
// token that goes with it, would pass with anyone's session.
func (s Signer) CSRFToken(cookie, bind string) string {
	msg := strconv.Itoa(len(cookie)) + ":" + cookie + bind
	return base64.RawURLEncoding.EncodeToString(s.mac("csrf", []byte(msg)))
}

func (s Signer) ValidCSRF(cookie, bind, token string) bool {
	if cookie == "" || token == "" {
		return false
	}
	want := s.CSRFToken(cookie, bind)
	return hmac.Equal([]byte(want), []byte(token))
}

// NewSigner signs with secret (≥ 32 bytes; share it between replicas).
func NewSigner(secret []byte) Signer { return Signer{key: secret} }
