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
	KindConfigSet              = "config-set"
	KindKillClient             = "kill-client"

	ArgTTL    = "ttl"
	ArgRecord = "record"
	// Arguments of the kinds acting on a server (OnServer): node is a
	// cluster node's address ("" or absent: the connection's own server).
	ArgNode      = "node"
	ArgParameter = "parameter"
	ArgValue     = "value"
	ArgClientID  = "id"
)
