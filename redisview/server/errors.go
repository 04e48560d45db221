package server

import (
	"errors"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"
)

// ErrRefused: the server answered, and refused the command — an ACL
// without it (NOPERM), a managed Redis that disabled or renamed it
// (unknown command). The panel that needed it says so; the rest of the
// page is read as usual.
var ErrRefused = errors.New("refused by the server")

// refusal wraps err from running what (a command, "CONFIG GET *"): a
// server's refusal as ErrRefused, in words; anything else (the server not
// answering) as is.
func refusal(what string, err error) error {
	var rerr redis.Error
	if err == nil || !errors.As(err, &rerr) || errors.Is(err, redis.ErrClosed) {
		return err
	}
	msg := err.Error()
	switch {
	case strings.HasPrefix(msg, "NOPERM"):
		return fmt.Errorf("%w: %s is not permitted to Keydeck's Redis user (ACL): %s", ErrRefused, what, msg)
	case strings.Contains(strings.ToLower(msg), "unknown command"), strings.Contains(strings.ToLower(msg), "unknown subcommand"):
		return fmt.Errorf("%w: this server does not offer %s (a managed Redis may disable it): %s", ErrRefused, what, msg)
	}
	return fmt.Errorf("%w: %s: %s", ErrRefused, what, msg)
}
