// Package leaderboard reads and follows leaderboards: sorted sets whose
// family has role leaderboard, with their companions (a metadata hash and a
// cached high score per member) as the schema pack names them.
//
// Reading one never loads it whole: windows are ZREVRANGE/ZRANGE
// start..stop (at most MaxWindow entries), members are found with
// ZREVRANK/ZRANK, and the list of leaderboards comes from SCAN MATCH
// <family prefix>* COUNT 500 (Scan), kept per connection by an Index that
// rescans in the background. A Tracker keeps, per window being polled, the
// moves between successive reads and the activity per minute.
package leaderboard
