package demo

import (
	"strings"
	"testing"
)

// The scanner keeps each command's name as sent, however the bytes arrive
// (pipelined, split anywhere), and gives up on none it cannot keep.
func TestNameScannerFollowsPipelinedCommands(t *testing.T) {
	long := strings.Repeat("n", maxNameLen+1)
	wire := "*3\r\n$3\r\nsEt\r\n$1\r\nk\r\n$5\r\na\r\nbc\r\n" + // a value holding CRLF
		"*1\r\n$4\r\nPING\r\n" +
		"*2\r\n$" + itoa(int64(len(long))) + "\r\n" + long + "\r\n$0\r\n\r\n" +
		"*2\r\n$6\r\nclient\r\n$4\r\nlist\r\n"
	want := []string{"sEt", "PING", "", "client"}
	for _, step := range []int{1, 2, 7, len(wire)} {
		var s nameScanner
		for i := 0; i < len(wire); i += step {
			s.feed([]byte(wire[i:min(i+step, len(wire))]))
		}
		var got []string
		for range want {
			got = append(got, s.pop())
		}
		if strings.Join(got, ",") != strings.Join(want, ",") || s.pop() != "" {
			t.Errorf("fed %d bytes at a time: names %q, want %q", step, got, want)
		}
	}
}
