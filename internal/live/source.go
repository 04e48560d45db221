// Package live is the topic hub behind the live dashboard: browsers subscribe
// to topics over a websocket, and each topic is served by exactly one poller
// however many browsers watch it, so Redis load grows with the number of
// distinct pages open, not with the number of tabs.
//
// The package only moves bytes; rendering and transport belong to callers.
package live

import "context"

// Source produces a topic's current payload.
type Source interface {
	// Poll reads the state and returns the rendered fragment. An error means
	// "nothing to send this tick" (the hub logs it at debug level with the
	// topic and carries on); sources render their own error/disconnected
	// states as payloads.
	//
	// The hub keeps the returned slice only until Poll returns (it copies
	// what it fans out), so a source may reuse its buffer between polls.
	Poll(ctx context.Context) ([]byte, error)
}

// A Source that also implements io.Closer is closed when its poller stops.

// SourceFunc adapts a function to Source.
type SourceFunc func(ctx context.Context) ([]byte, error)

// Poll calls f.
func (f SourceFunc) Poll(ctx context.Context) ([]byte, error) { return f(ctx) }
