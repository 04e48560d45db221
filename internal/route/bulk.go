package route

import "net/url"

// Paths of bulk jobs (issue 22): a family's or a pattern's keys counted
// (POST BulkCount, from its key list), then the job's page (live count,
// confirmation, progress) and its controls.
const (
	BulkCount  = "/c/:conn/db/:db/bulk"
	BulkJob    = "/c/:conn/bulk/:id"
	BulkStart  = "/c/:conn/bulk/:id/start"
	BulkCancel = "/c/:conn/bulk/:id/cancel"
	BulkResume = "/c/:conn/bulk/:id/resume"
	BulkUndo   = "/c/:conn/bulk/:id/undo"
)

// PatternKeysURL lists a database's keys matching a glob pattern (bytes,
// carried exactly).
func PatternKeysURL(conn string, db int, pattern string) string {
	return KeysPath(conn, db) + "?pattern=" + url.QueryEscape(pattern)
}

// BulkCountURL is where a key list's bulk forms post.
func BulkCountURL(conn string, db int) string { return DatabaseURL(conn, db) + "/bulk" }

// BulkJobURL is a bulk job's page.
func BulkJobURL(conn, id string) string { return OverviewURL(conn) + "/bulk/" + url.PathEscape(id) }

// BulkStartURL, BulkCancelURL, BulkResumeURL and BulkUndoURL are a job's
// controls (POST).
func BulkStartURL(conn, id string) string  { return BulkJobURL(conn, id) + "/start" }
func BulkCancelURL(conn, id string) string { return BulkJobURL(conn, id) + "/cancel" }
func BulkResumeURL(conn, id string) string { return BulkJobURL(conn, id) + "/resume" }
func BulkUndoURL(conn, id string) string   { return BulkJobURL(conn, id) + "/undo" }
