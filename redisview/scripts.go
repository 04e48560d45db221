package redisview

import (
	"sync"
	"time"
)

// ScriptMode is how a server runs Keydeck's read-only scripts.
type ScriptMode int

const (
	ScriptEvalRO  ScriptMode = iota // EVALSHA_RO / EVAL_RO (Redis 7+)
	ScriptEval                      // EVALSHA / EVAL (no _RO variants)
	ScriptRefused                   // scripts refused: read with pipelines
)

// scriptRetry is how long a connection whose server refused scripts is
// read with pipelines before scripts are tried again (ACLs change).
const scriptRetry = 5 * time.Minute

// Scripts remembers, for one connection, how its server runs read-only
// scripts: readers try EVAL_RO, fall back to EVAL where the server lacks
// it, and to pipelines where scripts are refused (ACL, scripting disabled),
// noting why. Safe for concurrent use.
type Scripts struct {
	mu    sync.Mutex
	mode  ScriptMode
	since time.Time
	why   string
}

// Mode is the way to run a script now; a refusal older than a few minutes
// is forgotten, so scripts are tried again.
func (s *Scripts) Mode(now time.Time) ScriptMode {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mode == ScriptRefused && now.Sub(s.since) > scriptRetry {
		s.mode, s.why = ScriptEvalRO, "" // try again: the ACL may have changed
	}
	return s.mode
}

// Set records how the server runs scripts and, for a refusal, why.
func (s *Scripts) Set(m ScriptMode, why string, now time.Time) {
	s.mu.Lock()
	s.mode, s.why, s.since = m, why, now
	s.mu.Unlock()
}

// Why says why scripts are not used, "" while they work.
func (s *Scripts) Why() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.why
}
