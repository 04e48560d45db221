package redisview

import (
	"errors"
	"strings"

	"github.com/redis/go-redis/v9"
)

// ErrRead: Redis was reached but would not answer a read (ACL, wrong
// password), or could not be reached. The message says which, so that a
// page never passes a refusal off as "this key does not exist".
var ErrRead = errors.New("redis read failed")

type readError struct{ msg string }

func (e readError) Error() string { return e.msg }
func (e readError) Unwrap() error { return ErrRead }

// ReadError explains err, met while doing what ("reading TYPE of
// \"k\""), in the words a support engineer can act on.
func ReadError(what string, err error) error {
	return readError{what + ": " + describeRedisErr(err)}
}

func describeRedisErr(err error) string {
	msg := err.Error()
	var rerr redis.Error
	switch {
	case strings.HasPrefix(msg, "NOPERM"):
		return "not permitted for this Redis user (ACL): " + strings.TrimPrefix(msg, "NOPERM ")
	case strings.HasPrefix(msg, "WRONGPASS"), strings.HasPrefix(msg, "NOAUTH"), strings.Contains(msg, "AUTH failed"):
		return "authentication failed (check the user and password of this connection): " + msg
	case errors.As(err, &rerr):
		return "refused by Redis: " + msg
	}
	return "Redis not reachable: " + msg
}

// Refusal explains a command the server would not run.
func Refusal(cmd string, err error) string {
	msg := err.Error()
	switch {
	case strings.HasPrefix(msg, "NOPERM"):
		return cmd + " is not permitted for this Redis user (ACL)"
	case strings.Contains(strings.ToLower(msg), "unknown command"):
		return "the server does not support " + cmd
	}
	return cmd + " failed: " + msg
}

// IsConnErr tells a failed round trip (server unreachable, timeout) from a
// command the server refused, which only degrades one panel.
func IsConnErr(err error) bool {
	if err == nil {
		return false
	}
	var rerr redis.Error
	if errors.As(err, &rerr) {
		return false
	}
	return true
}

// IsOutOfRange reports a SELECT of a database the server does not have.
func IsOutOfRange(err error) bool {
	return err != nil && strings.Contains(strings.ToLower(err.Error()), "out of range")
}

// PipelineErr is a pipeline's error when the trip as a whole failed, and
// nil when it is only the first of the replies its commands carry, which
// the caller judges one by one. A transport failure is always returned; a
// reply error no command holds (WRONGPASS while the connection was set up)
// failed the whole trip, whose commands hold no replies at all.
func PipelineErr(cmds []redis.Cmder, err error) error {
	var rerr redis.Error
	if err == nil || !errors.As(err, &rerr) || errors.Is(err, redis.ErrClosed) {
		return err
	}
	for _, c := range cmds {
		if c.Err() != nil {
			return nil
		}
	}
	return err
}
