package action

import (
	"errors"
	"fmt"
	"net"
	"strings"

	"github.com/redis/go-redis/v9"
)

// Sentinel errors: handlers map them to HTTP status codes with errors.Is.
// Every error this package returns wraps at most one of them and carries a
// message fit to show the person who clicked.
var (
	// ErrForbidden: the actor's role is too low, or actions are disabled (read-only).
	ErrForbidden = errors.New("not allowed")
	// ErrChanged: the key changed between the preview and the confirmation;
	// nothing was written. Preview again.
	ErrChanged = errors.New("the key changed since you previewed it")
	// ErrNotFound: the key (or the audit record) does not exist.
	ErrNotFound = errors.New("not found")
	// ErrAuditUnavailable: the intent could not be recorded, so nothing was written.
	ErrAuditUnavailable = errors.New("audit log unavailable")
	// ErrInvalid: bad arguments, an unknown action, an expired or foreign preview.
	ErrInvalid = errors.New("invalid request")
	// ErrNotUndoable: the audit record cannot be undone (see the message for why).
	ErrNotUndoable = errors.New("cannot undo")
	// ErrRedis: the target server was unreachable or refused a command (ACL,
	// a managed Redis without the command). The message says which.
	ErrRedis = errors.New("redis error")
	// ErrOutcomeUnknown: the change was sent and its reply lost (a read
	// timeout, a broken connection): it may have run. Never sent again;
	// recorded with outcome "unknown". It is also ErrRedis.
	ErrOutcomeUnknown = errors.New("the outcome is not known: the command may have run")
)

// unknownErr is an ErrOutcomeUnknown in words.
type unknownErr struct{ msg string }

func (e unknownErr) Error() string   { return e.msg }
func (e unknownErr) Unwrap() []error { return []error{ErrOutcomeUnknown, ErrRedis} }

// MayHaveRun is the error of a change whose reply was lost after it was
// sent (err, what go-redis answered): it may have run, and is not sent
// again.
func MayHaveRun(what string, err error) error {
	return unknownErr{fmt.Sprintf("%s: sent, but its reply was lost (%v); it may have run — check the server before running it again", what, err)}
}

// Sent reports whether err (a go-redis error, not a server reply) came
// after the command may have left: only a failure to dial means it did
// not.
func Sent(err error) bool {
	var op *net.OpError
	return !(errors.As(err, &op) && op.Op == "dial") && !errors.Is(err, redis.ErrClosed) && !errors.Is(err, redis.ErrPoolTimeout)
}

// quiet is an error that matches a sentinel without repeating its text:
// "not permitted by Redis ACL: …" reads better than "redis error: not …".
type quiet struct {
	msg      string
	sentinel error
	// unreachable: Redis was not reached or the connection failed (no
	// server reply), where a cluster's failover may be the cause.
	unreachable bool
}

func (e quiet) Error() string { return e.msg }
func (e quiet) Unwrap() error { return e.sentinel }

func redisf(format string, args ...any) error {
	return quiet{msg: fmt.Sprintf(format, args...), sentinel: ErrRedis}
}

func invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
}

func notUndoablef(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrNotUndoable, fmt.Sprintf(format, args...))
}

// redisErr turns a go-redis error into one a support engineer can act on.
// where says what Keydeck was doing ("reading", "committing").
func redisErr(where string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, redis.TxFailedErr) {
		return ErrChanged
	}
	msg := err.Error()
	switch {
	case strings.HasPrefix(msg, "NOPERM"):
		return redisf("not permitted by Redis ACL while %s: %s", where, strings.TrimPrefix(msg, "NOPERM "))
	case strings.HasPrefix(msg, "WRONGPASS"), strings.HasPrefix(msg, "NOAUTH"):
		return redisf("authentication failed while %s (check the connection's user and password): %s", where, msg)
	case isServerReply(err):
		return redisf("Redis refused the command while %s: %s", where, msg)
	default:
		return quiet{msg: fmt.Sprintf("Redis unreachable while %s: %s", where, msg), sentinel: ErrRedis, unreachable: true}
	}
}

// isUnreachable reports an error of redisErr's for a server not reached.
func isUnreachable(err error) bool {
	var q quiet
	return errors.As(err, &q) && q.unreachable
}

// isServerReply tells a reply the server sent (it is up and said no) from a
// transport failure (it may be down).
func isServerReply(err error) bool {
	var rerr redis.Error
	return errors.As(err, &rerr) && !errors.Is(err, redis.ErrClosed)
}

// isWrongType reports a WRONGTYPE reply (the embedded demo's DUMP of
// anything but a string).
func isWrongType(err error) bool {
	return isServerReply(err) && strings.HasPrefix(err.Error(), "WRONGTYPE")
}

func isSyntaxErr(err error) bool {
	return isServerReply(err) && strings.Contains(strings.ToLower(err.Error()), "syntax error")
}

// isUnsupported reports a command the server does not know or the ACL user
// may not run: optional reads degrade instead of failing the action.
func isUnsupported(err error) bool {
	if err == nil || !isServerReply(err) {
		return false
	}
	msg := strings.ToLower(err.Error())
	return strings.Contains(msg, "unknown command") || strings.HasPrefix(msg, "noperm") || strings.Contains(msg, "unknown subcommand")
}
