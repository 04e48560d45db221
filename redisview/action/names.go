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

	// Single-key edits (issue 22): see edit.go.
	KindCreateKey      = "create-key"
	KindSetString      = "set-string"
	KindSetHashField   = "set-hash-field"
	KindSetListElement = "set-list-element"
	KindPushList       = "push-list"
	KindAddSetMember   = "add-set-member"
	KindAddZSetMember  = "add-zset-member"
	KindAddStreamEntry = "add-stream-entry"
	KindRenameKey      = "rename-key"
	KindPersist        = "persist"

	ArgType     = "type"
	ArgEncoding = "encoding" // of ArgValue: text (default) or hex
	ArgIndex    = "index"
	ArgSide     = "side" // push-list: left or right
	ArgScore    = "score"
	ArgFields   = "fields" // add-stream-entry: a JSON object
	ArgEntryID  = "entry"  // add-stream-entry: * or an explicit id
	ArgTarget   = "target"
	ArgReplace  = "replace"
)
