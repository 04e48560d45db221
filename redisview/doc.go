// Package redisview is Keydeck's domain layer over Redis: it takes the
// servers it is given, reads them, says what their keys mean and acts on
// them, and imports neither echo nor templ.
//
// This package holds what every part builds on, the connections: the
// registry of named servers, their URLs and monitor, the schema pack each
// one is matched to, what each server allows (Scripts), keyspace
// notifications and the KeyWatch that routes them to live views, and the
// errors a read may meet; with them two small helpers every reader uses (Opt,
// FormatBytes) and the bloom positions of the ban role, which move to a ban
// package when bans get their view. One package per meaning sits beside it:
//
//   - schema: schema packs and the key classifier;
//   - stats: server overview and per-database statistics;
//   - leaderboard: the leaderboard role family (one package per role
//     family with a view);
//   - action: admin actions, their audit log and undo.
package redisview
