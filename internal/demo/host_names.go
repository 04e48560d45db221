package demo

import (
	"bytes"
	"strconv"
)

// nameScanner follows the RESP a client sends and keeps each command's
// name as sent: miniredis hands the hook the name in upper case, and
// Redis's slow log shows the command as the client wrote it ("set", not
// "SET"). It reads only the arrays' headers and first elements; a name it
// missed (a name longer than a command's) is "", and the host then uses
// miniredis's.
type nameScanner struct {
	line  []byte
	elems int  // elements left in the current command
	first bool // the next element is the command's name
	skip  int  // bytes of a bulk string (and its CRLF) still to pass
	keep  bool // the bulk string being passed is the name
	name  []byte
	names []string // first in, first out
}

// maxNameLen bounds what the scanner keeps of one name: Redis's longest
// command name is shorter.
const maxNameLen = 64

// maxQueued bounds the names of commands read ahead of the one running.
const maxQueued = 4096

func (s *nameScanner) feed(b []byte) {
	for len(b) > 0 {
		if s.skip > 0 {
			n := min(s.skip, len(b))
			if s.keep {
				s.name = append(s.name, b[:n]...)
			}
			s.skip -= n
			b = b[n:]
			if s.skip == 0 && s.keep {
				s.push(string(bytes.TrimSuffix(s.name, []byte("\r\n"))))
				s.keep, s.name = false, s.name[:0]
			}
			continue
		}
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			s.line = append(s.line, b...)
			if len(s.line) > maxNameLen {
				s.line = s.line[:0] // not a header: the server will refuse it
			}
			return
		}
		s.line = append(s.line, b[:i+1]...)
		b = b[i+1:]
		s.header(string(bytes.TrimRight(s.line, "\r\n")))
		s.line = s.line[:0]
	}
}

func (s *nameScanner) header(l string) {
	if l == "" {
		return
	}
	n, err := strconv.Atoi(l[1:])
	switch {
	case s.elems == 0 && l[0] == '*':
		s.elems, s.first = max(n, 0), n > 0
	case s.elems > 0 && l[0] == '$' && err == nil:
		s.elems--
		s.skip = max(n, 0) + 2
		s.keep = s.first && n <= maxNameLen
		if s.first && !s.keep {
			s.push("")
		}
		s.first = false
	case s.elems > 0:
		s.elems--
		if s.first {
			s.push(l[1:])
		}
		s.first = false
	}
}

func (s *nameScanner) push(name string) {
	if len(s.names) < maxQueued {
		s.names = append(s.names, name)
	}
}

// pop returns the name of the next command, as sent.
func (s *nameScanner) pop() string {
	if len(s.names) == 0 {
		return ""
	}
	n := s.names[0]
	s.names = s.names[1:]
	return n
}
