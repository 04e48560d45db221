package redisview

// Opt is a value the server may not provide. Why says why it is missing, in
// words a user can act on ("the server's INFO has no memory section").
type Opt[T any] struct {
	V   T
	OK  bool
	Why string
	// Pending marks a value that will come (a first sample, no lookups yet),
	// as opposed to one this server never reports.
	Pending bool
}

// Some wraps a known value.
func Some[T any](v T) Opt[T] { return Opt[T]{V: v, OK: true} }

// None records why a value is missing.
func None[T any](why string) Opt[T] { return Opt[T]{Why: why} }

// Pending records a value that is not known yet but will be.
func Pending[T any](why string) Opt[T] { return Opt[T]{Why: why, Pending: true} }
