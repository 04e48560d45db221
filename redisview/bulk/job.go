package bulk

import (
	"time"
)

// Selection names the keys of a scan job: a family of the connection's
// pack, or a glob pattern (SCAN MATCH), in one database. An import's
// selection names only the database (and its source, in Label).
type Selection struct {
	Conn    string `json:"conn"`
	DB      int    `json:"db"`
	Family  string `json:"family,omitempty"`
	Pattern string `json:"pattern,omitempty"`
	// Label describes a selection of given items (an import's file name).
	Label string `json:"label,omitempty"`
}

// Spec is what a job does: its kind, its selection and the kind's
// arguments.
type Spec struct {
	Kind string    `json:"kind"` // KindDelete, KindExpire, KindPersist, KindUndo, or a registered kind (import)
	Sel  Selection `json:"sel"`
	// TTL is KindExpire's: every key expires TTL after its batch runs.
	TTL time.Duration `json:"ttl,omitempty"`
	// Undoes is an undo job's: the job it reverses.
	Undoes string `json:"undoes,omitempty"`
}

// Status is where a job is in its life.
type Status string

const (
	Counting  Status = "counting"  // the count runs
	Counted   Status = "counted"   // waiting for confirmation (Start)
	Running   Status = "running"   // batches run
	Cancelled Status = "cancelled" // stopped by an admin; Resume goes on
	Done      Status = "done"      // every item acted on or skipped
	Failed    Status = "failed"    // stopped by an error (Error); Resume goes on if it was running
)

// SampleSize is how many counted key names a job keeps to show.
const SampleSize = 20

// Job is a job's state, as stored in the audit Redis.
type Job struct {
	ID    string `json:"id"`
	Spec  Spec   `json:"spec"`
	Title string `json:"title"` // the kind's title ("Delete")
	// User and Level: who counted it; StartedBy: who confirmed it.
	User      string `json:"user"`
	Level     string `json:"level"`
	StartedBy string `json:"started_by,omitempty"`
	Status    Status `json:"status"`
	Error     string `json:"error,omitempty"`

	// The count: keys SCAN returned (Scanned), the items kept (Count),
	// their total MEMORY USAGE and DUMP size, and the first names.
	Scanned   int64 `json:"scanned"`
	Count     int64 `json:"count"`
	Memory    int64 `json:"memory"`
	DumpBytes int64 `json:"dump_bytes"`
	Sensitive int64 `json:"sensitive"` // counted keys of sensitive families
	// MemoryUnknown counts the keys whose MEMORY USAGE the server did
	// not give (Memory leaves them out); Large the keys too large to read
	// (LargeKey names the first); ItemBytes is what the items take in
	// the audit Redis.
	MemoryUnknown int64    `json:"memory_unknown,omitempty"`
	Large         int64    `json:"large,omitempty"`
	LargeKey      string   `json:"large_key,omitempty"`
	ItemBytes     int64    `json:"item_bytes,omitempty"`
	Sample        []string `json:"sample,omitempty"`
	Undoable      bool     `json:"undoable"`
	UndoReason    string   `json:"undo_reason,omitempty"` // why not, when not

	// Execution: items handled (Next), acted on (Acted), skipped because
	// changed since the count (Changed), gone (Gone), or for another
	// reason (Other: an undo's key that exists again, an expiry passed).
	Next    int64 `json:"next"`
	Acted   int64 `json:"acted"`
	Changed int64 `json:"changed"`
	Gone    int64 `json:"gone"`
	Other   int64 `json:"other"`

	Intent   string `json:"intent,omitempty"`  // the audit intent record's id
	Outcome  string `json:"outcome,omitempty"` // the latest outcome record's id
	UndoneBy string `json:"undone_by,omitempty"`

	Created time.Time `json:"created"`
	Updated time.Time `json:"updated"`
	// Owner is the engine running it (while Running).
	Owner string `json:"owner,omitempty"`
}

// Skipped is the number of items not acted on.
func (j Job) Skipped() int64 { return j.Changed + j.Gone + j.Other }

// Progress is the share of items handled, 0 to 1.
func (j Job) Progress() float64 {
	if j.Count == 0 {
		return 1
	}
	return float64(j.Next) / float64(j.Count)
}

// Item is one key of a job: its name, the fingerprint of the state it
// was counted (or previewed) in — Absent for a key that did not exist —
// and, for a kind that writes values (import), the payload its Queue
// writes.
type Item struct {
	Key     string
	Print   string
	Payload []byte
}

// Absent is the fingerprint of a key that does not exist.
const Absent = "-"

// Skip is one skipped item, as reported.
type Skip struct {
	Key    string `json:"key"`
	Reason string `json:"reason"`
}

// Why an item was skipped.
const (
	ReasonChanged = "changed since the count"
	ReasonGone    = "gone since the count"
	ReasonExists  = "exists again"  // undo: a deleted key was created again
	ReasonExpired = "expiry passed" // undo: the prior expiry is in the past
	ReasonNoPrior = "nothing to restore"
)
