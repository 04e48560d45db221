package redisview

// Opt is a value the server may not provide. Why says why it is missing, in
// words a user can act on ("the server's INFO has no memory section").
type Opt[T any] struct {
	V   T
	OK  bool
	Why string
}

// Some wraps a known value.
func Some[T any](v T) Opt[T] { return Opt[T]{V: v, OK: true} }

// None records why a value is missing.
func None[T any](why string) Opt[T] { return Opt[T]{Why: why} }
