// Package codeshape holds no code: its test keeps the shape the platform
// issue set — no function over 80 lines and no file over 500 outside the
// benchmark commands, tests and generated code, and at most 10 time.Sleep
// calls in tests (the rest wait on a fake clock or a condition).
package codeshape
