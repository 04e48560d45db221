package console

import (
	"strconv"
	"strings"
)

// randomCounts are the reads whose count argument (args[2]), not their
// key's size, sets the reply's length: a negative count repeats members,
// so SRANDMEMBER of a one-member set with -200000000 builds a reply of
// 200 million elements in the server's memory.
//
// The other count-like arguments of reads are bounded by the key's size,
// which checkCost measures first (their commands are @slow): ZRANGE …
// LIMIT, XRANGE/XREVRANGE COUNT, LPOS COUNT/MAXLEN, GEOSEARCH COUNT and
// LRANGE/ZRANGE index ranges return at most the key's elements, at most
// MaxElements; SCAN's family COUNT is capped at MaxScanCount.
var randomCounts = map[string]string{"srandmember": "members", "hrandfield": "fields", "zrandmember": "members"}

// checkCounts refuses a random-member count that is negative or above
// MaxElements, for everyone. A count that is not a number is left to the
// server, which answers it with an error.
func checkCounts(c *Command, args []string) error {
	if err := checkGlobs(c, args); err != nil {
		return err
	}
	unit, ok := randomCounts[c.Name]
	if !ok || len(args) < 3 {
		return nil
	}
	n, err := strconv.ParseInt(args[2], 10, 64)
	if err != nil {
		return nil
	}
	up := strings.ToUpper(c.Name)
	switch {
	case n < 0:
		return forbidden(KeyPage, args[1], "%s with a negative count repeats %s up to the count's size, whatever the key holds: the console takes a count from 0 to %d", up, unit, MaxElements)
	case n > MaxElements:
		return forbidden(KeyPage, args[1], "%s count %d is above the console's bound of %d %s per reply", up, n, MaxElements, unit)
	}
	return nil
}

// Glob bounds: Redis matches a glob by backtracking (before 7.0.10 and
// 6.2.11 exponentially, CVE-2022-36021), a SCAN's MATCH against every name
// it walks. A short glob with few wildcards is what people type; the
// Pub/Sub page bounds its filters the same way.
const (
	MaxGlobBytes = 256
	MaxGlobMeta  = 8
)

// checkGlobs bounds the MATCH of the SCAN family and the PATTERN of
// COMMAND LIST FILTERBY.
func checkGlobs(c *Command, args []string) error {
	if !isScan(c) && c.Name != "command|list" {
		return nil
	}
	for i := 1; i+1 < len(args); i++ {
		if !strings.EqualFold(args[i], "match") && !strings.EqualFold(args[i], "pattern") {
			continue
		}
		g := args[i+1]
		n := strings.Count(g, "*") + strings.Count(g, "?") + strings.Count(g, "[")
		if len(g) > MaxGlobBytes || n > MaxGlobMeta {
			return forbidden(KeyBrowser, "", "a glob is at most %d bytes with at most %d wildcards (*, ? and [) in the console: Redis matches one by backtracking against every name it walks", MaxGlobBytes, MaxGlobMeta)
		}
	}
	return nil
}
