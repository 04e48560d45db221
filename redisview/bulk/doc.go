// Package bulk acts on many keys of one database at once — every key of a
// family or of a glob pattern, or the items of an import — as a job that
// is counted first, confirmed, then executed in rate-limited batches,
// cancellable, resumable after a restart, audited and undoable up to a
// bound. It knows nothing of HTTP.
//
// # Lifecycle
//
//	j, err := eng.Count(ctx, actor, conn, bulk.Spec{Kind: "delete", Sel: sel}, tap)
//	// the count runs in the background: eng.Job(ctx, j.ID) until j.Status == Counted
//	err = eng.Start(ctx, actor, j.ID, typed) // typed: the count, when !j.Undoable
//	// batches run; eng.Cancel / eng.Resume; Job says Done, Skipped …
//	u, err := eng.Undo(ctx, actor, j.ID)     // an undo job, counted from the priors
//	err = eng.Start(ctx, actor, u.ID, 0)
//
// An import (or any job whose keys are not found by a scan) is prepared
// from items the caller gives (Prepare): each item a key and a payload
// that the job kind's Queue writes inside the batch's MULTI.
//
// # Exactly the keys counted
//
// The count stores every key it found, with a fingerprint of the state it
// found it in, in the audit Redis (the job's items list). Execution acts
// on those items only: a key created after the count is not among them. A
// batch WATCHes its keys, reads their state again (sizes, TYPE,
// PEXPIRETIME, DUMP) and queues the writes in MULTI only for the keys whose
// fingerprint is still the counted one; the others are skipped and
// reported ("changed since the count", "gone"). EXEC fails if a watched
// key is written between that read and the write; the batch is then read
// again (the keys written meanwhile are skipped).
//
// The fingerprint is an HMAC of the key's type, its absolute expiry in ms
// and its DUMP. Its key is random, made once (SET NX) in the audit Redis
// (keydeck:bulk:fingerprint-key): shared by every replica and restart,
// and not the session secret, whose rotation would make every stored
// fingerprint differ. A digest of a sensitive value says nothing.
//
// A value is read only once its size is known: TYPE, MEMORY USAGE (its
// default sampling, not the O(n) SAMPLES 0) and the type's length
// (STRLEN, HLEN …) come first, in pipelines; DUMP is sent only for a key
// of at most Options.MaxKeyBytes (1 MiB), in pipelines of at most four
// times that. A larger key, or an aggregate whose memory the server will
// not say, is never DUMPed: it is fingerprinted by type, expiry and
// length (a change keeping its length goes unseen), and its job cannot
// be undone — said at the count, naming the key. Cost: one DUMP per small
// key when counting and one when executing (a TTL or persist job's state
// after is its value as read, with the expiry read in the MULTI); no value
// is kept, 16 bytes of digest per key are.
//
// # Bounds and pace
//
// A count stops past Options.MaxKeys keys ("narrow the pattern"). Each
// item takes about 60–100 bytes of the audit Redis (the preview says how
// much): the records of a job never started (counted, cancelled, failed
// while counting, an undo previewed) stay Options.PreviewTTL (1h); Start
// gives them the long retention. A count that does not end deletes its
// items. The count's reads (per key) and the batches' writes draw from
// the connection's bulk budget (Options.Rate) as the user who counted or
// started them, fairly between users (scanbudget): more jobs do not buy
// more rate. The budget is each Keydeck process's: N replicas give a
// connection N × Rate.
//
// # Undo
//
// Up to the bound (Options.UndoKeys keys, Options.UndoBytes bytes of DUMP,
// both known exactly at the count), each key's prior state (DUMP and
// absolute expiry) and the state the job left are recorded in the audit
// Redis. Undo is a job of kind "undo" over those records: a key still in
// the state the job left is restored (RESTORE … REPLACE ABSTTL, or
// UNLINK for a key the job created); so is a key gone once the expiry the
// job set has passed (a TTL job's keys: RESTORE without REPLACE); one
// that changed since, or exists again, or whose own prior expiry has
// passed, is skipped and reported. The original is marked undone when
// its undo starts (an undo previewed and cancelled leaves it undoable),
// and a job undone is not resumed. Above the
// bound, or with a key of a sensitive family (its value is never
// recorded), the job cannot be undone: Job.Undoable is false, which the
// preview says, and Start asks for the count typed back.
//
// # Storage (audit Redis; all under keydeck:, which no action may change)
//
//	keydeck:bulk:fingerprint-key    STRING  the fingerprints' key (no expiry)
//	keydeck:bulk:jobs               ZSET  job ids by creation time
//	keydeck:bulk:job:<id>           HASH  state (JSON), cancel
//	keydeck:bulk:job:<id>:items     LIST  the counted items (key, fingerprint, payload)
//	keydeck:bulk:job:<id>:priors    LIST  per key acted on: prior DUMP, expiry, state after
//	keydeck:bulk:job:<id>:skipped   LIST  per key skipped: key and why
//	keydeck:bulk:job:<id>:inflight  HASH  the batch under way (priors, read before EXEC, and the state the write leaves)
//	keydeck:bulk:job:<id>:lease     STRING  the engine running it (PX Options.Lease)
//
// The engine running or counting a job renews its lease every Lease/3
// (through rate waits too) and stops the job when it finds the lease
// lost. Every write of a job's records (in-flight, batch results, final
// state, the lease's release) is fenced: a MULTI under WATCH of the lease
// key, written only while this engine holds it. Start, Cancel and Resume
// take the lease and change the job's status as a compare-and-set (WATCH
// of the job key): of two racing requests one is refused (ErrState).
//
// A running job whose lease lapsed (its Keydeck died) is taken over by the
// next engine's Run; the batch that was in flight is read again. A key
// found no longer in its counted state with an in-flight record counts as
// acted on (its prior the recorded one) only if it is in exactly the
// state that batch's write leaves (a kind's Expect: absent for a delete,
// the expiry set, no expiry, the prior restored); otherwise the
// application wrote it since, and it is skipped. A kind without Expect
// (an import) has such keys reported as ReasonUnknown.
//
// Expiries are set and checked on Redis's clock (TIME, read in each
// batch's WATCH), not Keydeck's.
//
// # Audit
//
// One intent record when a job starts (action "bulk-<kind>", args: the
// job id, the selection, the count), and one outcome record each time it
// stops (done: ok; cancelled or failed: failed, with the counts in its
// summary, and who cancelled), in the audit stream every action writes.
// A cancel or a resume is an intent record of its own, by the admin who
// asked (args control: cancel or resume; Ref: the job's intent).
package bulk
