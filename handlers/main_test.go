package handlers_test

import (
	"flag"
	"os"
	"testing"
)

// parallelTests is how many of this package's tests run at once unless
// -parallel says otherwise. Its tests mostly wait (for a sweep, a
// websocket frame, a server starting), each on servers of its own, so more
// of them than the machine's cores overlap their waits; the few that
// change package state (the search limits) do not call t.Parallel and so
// run before the others start.
const parallelTests = "4"

func TestMain(m *testing.M) {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		if err := flag.Set("test.parallel", parallelTests); err != nil {
			panic(err)
		}
	}
	os.Exit(m.Run())
}
