// Package action is Keydeck's only way to write to a Redis server: named,
// role-checked actions with a preview, an atomic execution and an audit
// record from which they can be undone. It knows nothing of HTTP.
//
// A handler previews, shows the preview, and executes what was confirmed:
//
//	pv, err := runner.Preview(ctx, actor, conn, "set-ttl", action.Request{
//		Conn: conn.Name, DB: 3, Key: key, Args: map[string]string{"ttl": "10m"}})
//	// render pv.Summary, pv.Changes, pv.Notes; put sign(pv.Token()) in the form
//	pv, err = action.ParseToken(verified(form.Token))
//	out, err := runner.Execute(ctx, actor, conn, pv)
//	// errors.Is(err, action.ErrChanged) → 409 "preview again", …
//
// Execution, for every kind:
//
//  1. the role is checked again, and the request re-planned from scratch;
//  2. the keys are WATCHed and read (TYPE, PTTL, PEXPIRETIME, DUMP; for a
//     sorted set acted on by member, see MemberPlan, that member's ZSCORE
//     instead); their fingerprints must equal the preview's, or ErrChanged;
//  3. an intent record with the prior values is appended to the audit
//     stream; if that fails, nothing is written (ErrAuditUnavailable);
//  4. MULTI, the kind's writes, the post-state reads, EXEC: all or nothing,
//     and nothing at all if a watched key was touched since step 2;
//  5. an outcome record (ok, failed or refused) referencing the intent.
//
// Because the prior values are read under the same WATCH that guards EXEC,
// the recorded prior is exactly the state the change replaced.
//
// On a Redis Cluster every key a transaction reads or writes must be in
// one hash slot (CrossSlot): the preview refuses an action whose keys are
// not, naming them, and so does Execute; the transaction runs on that
// slot's primary. When the connection is lost with EXEC under way on a
// sentinel or cluster connection (a failover), Execute reads the keys
// again on the primary that answers next (settleLost) and records whether
// the change was made; a confirmation that changed nothing may be
// confirmed again.
//
// A live leaderboard changes many times a second, so an action on one of
// its entries (MemberPlan) fingerprints and records that member only, and
// when EXEC fails because the sorted set was written, steps 2 and 4 are
// retried (up to 3 times, the intent kept) as long as every fingerprint,
// the member's score included, still equals the preview's.
//
// # Kinds
//
// Admin: delete-key, set-ttl and undo, on any key. Support: reset-limit
// (ResetLimit: delete a rate-limit key, and the lock its window sets, so
// the user may try again), force-unlock (ForceUnlock: delete a lock,
// only while it holds the value the preview showed) and
// remove-leaderboard-entry (RemoveLeaderboardEntry: a member of a
// leaderboard with its metadata and high-score keys). The support kinds
// classify the key with the connection's schema pack and refuse any other
// role; they implement Applicable, which the UI uses to offer only the
// actions that fit a key.
//
// Admin, editing one key (edit.go): create-key (any type, its value and
// TTL; refused over an existing key), set-string (TTL kept),
// set-hash-field, set-list-element, push-list, add-set-member,
// add-zset-member, add-stream-entry, rename-key (over an existing target
// only when replace is asked; both keys recorded) and persist. A hash
// field or a set or sorted-set member is acted on as a part (MemberPlan);
// the others act on the whole key. Values the pack knows the shape of are
// checked (editshape.go); a sensitive key's values are worded by size.
//
// # Actions on a server
//
// A kind acting on a server rather than on keys (config-set, kill-client)
// returns OnServer(node, plan) from Plan; the plan (ServerPlan) reads the
// state it changes, describes the change and applies it once. The Runner
// checks the role and read-only mode, reads the state at preview and again
// at the confirmation (a difference is ErrServerChanged, also ErrChanged),
// claims the confirmation once, records the intent with the prior state
// and the outcome with the state left (the record's "server" field,
// ServerTarget), and undoes it through the kind's ServerUndoer, only while
// the state is still the one the action left. A kind without one cannot
// be undone, and its preview says so first (Preview.UndoNote).
//
// # Audit records
//
// One stream entry per record, flat string fields (empty ones omitted):
//
//	v        "1"
//	phase    "intent" | "outcome"
//	ref      outcome: the intent's stream id ("" if refused before any intent)
//	time     RFC 3339, UTC
//	user, role, action, conn, db
//	key      the first key; keys: JSON array of every key
//	args     JSON object of the request's arguments
//	summary  what was (to be) done, in words
//	targets  JSON array, one per key:
//	           {key, type, family, sensitive, size, unit, pttl,
//	            prior  (intent: base64 DUMP, or "(sensitive, not recorded)"),
//	            before (intent: fingerprint), after (outcome: fingerprint),
//	            member (a sorted set acted on by member: {name, present,
//	                    score, rank} before (intent) or after (outcome);
//	                    prior is then empty, the key is never DUMPed)}
//	outcome  "ok" | "failed" | "refused" | "unknown" (outcome records;
//	         unknown: sent, its reply lost, it may have run)
//	error    why it failed or was refused
//	undoes   undo: the outcome id it reverses
//	server   an action on a server: JSON {node, target, prior (intent),
//	         after (outcome), absent, kind (the kind that writes it
//	         back; absent: cannot be undone)}
//
// An undo claims the record it reverses with the key <stream>:undone:<id>
// (set with its intent, kept on success, removed on failure), which is how
// a second undo of the same record is refused.
package action
