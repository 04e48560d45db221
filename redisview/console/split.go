// Package console is the command console's domain: a command line split
// into arguments as redis-cli splits it, each server's own command table
// (COMMAND) and the classes and role rules read from it, the key sizes a
// read may cost, replies shown as redis-cli shows them, the action kind
// that runs a write on keys through the audited action path, and each
// person's history. It judges by what the server says of a command, never
// by a list Keydeck ships, except for the connection-state commands no
// flag marks.
package console

import (
	"errors"
	"fmt"
)

// ErrQuote is a command line whose quotes do not close, or close in the
// middle of an argument.
var ErrQuote = errors.New("unbalanced quotes")

// Split splits a command line into arguments the way redis-cli does
// (sdssplitargs): arguments are separated by white space; "double quotes"
// take the escapes \xHH, \n, \r, \t, \b, \a and \c for any other c;
// 'single quotes' take only \'; a closing quote must end the argument.
// Arguments are bytes: nothing is trimmed inside quotes, and \xHH makes
// any byte, valid UTF-8 or not.
func Split(line string) ([]string, error) {
	var args []string
	i, n := 0, len(line)
	for {
		for i < n && isSpace(line[i]) {
			i++
		}
		if i >= n {
			return args, nil
		}
		var cur []byte
		inDouble, inSingle, done := false, false, false
		start := i
		for !done {
			if i >= n {
				if inDouble || inSingle {
					return nil, fmt.Errorf("%w: the quote opened at byte %d does not close", ErrQuote, start+1)
				}
				break
			}
			c := line[i]
			switch {
			case inDouble:
				switch {
				case c == '\\' && i+3 < n && line[i+1] == 'x' && isHex(line[i+2]) && isHex(line[i+3]):
					cur = append(cur, hexVal(line[i+2])<<4|hexVal(line[i+3]))
					i += 3
				case c == '\\' && i+1 < n:
					i++
					cur = append(cur, unescape(line[i]))
				case c == '"':
					if i+1 < n && !isSpace(line[i+1]) {
						return nil, fmt.Errorf("%w: a closing quote must be followed by a space (byte %d)", ErrQuote, i+1)
					}
					done = true
				default:
					cur = append(cur, c)
				}
			case inSingle:
				switch {
				case c == '\\' && i+1 < n && line[i+1] == '\'':
					i++
					cur = append(cur, '\'')
				case c == '\'':
					if i+1 < n && !isSpace(line[i+1]) {
						return nil, fmt.Errorf("%w: a closing quote must be followed by a space (byte %d)", ErrQuote, i+1)
					}
					done = true
				default:
					cur = append(cur, c)
				}
			default:
				switch c {
				case ' ', '\n', '\r', '\t', 0:
					done = true
				case '"':
					inDouble = true
				case '\'':
					inSingle = true
				default:
					cur = append(cur, c)
				}
			}
			if i < n {
				i++
			}
		}
		args = append(args, string(cur))
	}
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\v' || c == '\f'
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

func hexVal(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	default:
		return c - 'A' + 10
	}
}

func unescape(c byte) byte {
	switch c {
	case 'n':
		return '\n'
	case 'r':
		return '\r'
	case 't':
		return '\t'
	case 'b':
		return '\b'
	case 'a':
		return '\a'
	}
	return c
}
