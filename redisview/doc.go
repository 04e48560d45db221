// Package redisview is Keydeck's domain layer over Redis: it takes the
// servers it is given, reads them, says what their keys mean and acts on
// them, and imports neither echo nor templ.
//
// This package holds what every part builds on, the connections: the
// registry of named servers, their URLs and monitor, the schema pack each
// one is matched to, what each server allows (Scripts), keyspace
// notifications and the KeyWatch that routes them to live views, and the
// errors a read may meet; with them a few small helpers every reader uses
// (Opt, FormatBytes, LengthCmd) and the bloom positions (BloomPositions,
// JavaHashCode) the ban lists and the user page share. One package per
// meaning sits beside it:
//
//   - schema: schema packs (FORMAT.md) and the key classifier;
//   - stats: server overview, per-database statistics and their sweepers;
//   - browse: one family's (or one prefix's) keys, a bounded page at a time;
//   - value: what a key holds, by its type, one bounded page at a time;
//   - decode: what a key means by its family's role (tokens, counts, holders);
//   - level: a limit's level as plain numbers, which views/format writes;
//   - search: finding keys from one typed line (glob, family, value);
//   - scanbudget: one connection's fair share of the scans people start;
//   - leaderboard: leaderboards with their companions, read and followed;
//   - limits: the rate-limit and lock keys, kept in view by a budgeted sweep;
//   - quotas: quotas, budgets, reservations and breaker hints, walked in budget;
//   - bans: ban lists (a bloom with its exact set), decided as the application does;
//   - vertique: vertique's Bucket4j bucket keys and their key generations;
//   - action: admin actions, their audit log and undo.
package redisview
