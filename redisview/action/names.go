package action

// Names of the built-in kinds and of their arguments, as requests, forms
// and audit records carry them. Handlers use these, never string literals.
const (
	KindDeleteKey              = "delete-key"
	KindSetTTL                 = "set-ttl"
	KindResetLimit             = "reset-limit"
	KindForceUnlock            = "force-unlock"
	KindRemoveLeaderboardEntry = "remove-leaderboard-entry"
	KindUndo                   = "undo"

	ArgTTL    = "ttl"
	ArgRecord = "record"
)
