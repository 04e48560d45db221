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
