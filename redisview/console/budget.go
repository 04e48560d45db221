package console

import (
	"strconv"
	"strings"
)

// MaxArgs bounds a console line's arguments: at three checks for each
// argument that may be a key, a line of 1,000 costs about two seconds of a
// default budget, never the whole connection's for a minute.
const MaxArgs = 1000

// Cost is what a console line costs its connection's request budget, in
// the units of the scan budget searches draw from (keys walked): one for
// the command, one for its COMMAND GETKEYS, three for each argument that
// may be a key (its TYPE, its size, its bytes: the checks before a read),
// and a SCAN family's COUNT (the keys it walks; 10 without one). A person
// looping commands is then paced like one looping searches.
func Cost(args []string) int64 {
	if len(args) == 0 {
		return 1
	}
	n := int64(2 + 3*(len(args)-1))
	switch strings.ToLower(args[0]) {
	case "scan", "hscan", "sscan", "zscan":
		count := int64(10)
		for i := 1; i+1 < len(args); i++ {
			if strings.EqualFold(args[i], "count") {
				if c, err := strconv.ParseInt(args[i+1], 10, 64); err == nil && c > 0 {
					count = min(c, MaxScanCount)
				}
			}
		}
		n += count
	}
	return n
}
