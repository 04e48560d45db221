package bulk

import (
	"errors"
	"fmt"

	"github.com/keydeck/keydeck/redisview/action"
)

// The engine's errors wrap the action package's sentinels, so the
// handlers' one error table maps them (400, 403, 404, 409, 503).
var (
	ErrInvalid  = action.ErrInvalid                                      // a bad spec, a wrong typed count
	ErrNotFound = fmt.Errorf("%w: no such bulk job", action.ErrNotFound) // an unknown job id
	// ErrState: the job is not in a state that allows it (start a job
	// still counting, resume a finished one …): 409.
	ErrState = errors.New("the bulk job is not in a state that allows this")
)

func invalidf(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, a...))
}

func statef(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrState, fmt.Sprintf(format, a...))
}

var errAudit = action.ErrAuditUnavailable
