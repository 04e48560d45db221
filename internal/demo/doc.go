// Package demo is the embedded demo Keydeck serves when no Redis is named:
// three in-process Redis servers (eIsland, the LLM gateway, vertique)
// seeded with data in each system's key layout, and a traffic simulator
// that keeps them moving.
package demo
