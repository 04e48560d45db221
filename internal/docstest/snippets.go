// Package docstest checks the README and docs/*.md against the code: every
// shell snippet is marked runnable or not (and the runnable ones run, in
// snippets_test.go), every relative link and anchor resolves, and no
// paragraph is glued to a table (Markdown would render it as a row).
package docstest

import (
	"fmt"
	"regexp"
	"strings"
)

// A Snippet is one fenced shell block of a Markdown file.
type Snippet struct {
	File string
	Line int    // of the opening fence, 1-based
	Body string // the commands, without the fences
	Mark Mark
}

// Mark is what the HTML comment before a snippet says about running it.
type Mark struct {
	Runnable bool
	// Serves: the snippet starts the console, which runs until stopped;
	// the runner gives it a free address (below) and checks it answers.
	Serves bool
	// Redis: the snippet watches a Redis at 127.0.0.1:6379; the runner
	// starts a redis-server and puts its address there.
	Redis bool
	// Why a snippet is not runnable (required when it is not).
	Why string
}

var (
	fence  = regexp.MustCompile("^```\\s*(sh|bash|shell|console)\\b")
	marker = regexp.MustCompile(`^<!--\s*(runnable|not runnable)\s*(?::\s*(.*?))?\s*-->$`)
)

// Snippets returns the shell snippets of one Markdown file, each with the
// marker of the nearest non-blank line before its fence; a snippet without
// one, or with a marker it cannot read, is an error naming file and line.
func Snippets(file, text string) ([]Snippet, []error) {
	var out []Snippet
	var errs []error
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		if !fence.MatchString(lines[i]) {
			continue
		}
		s := Snippet{File: file, Line: i + 1}
		m, err := markBefore(lines, i)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s:%d: %w", file, i+1, err))
		}
		s.Mark = m
		end := i + 1
		for end < len(lines) && !strings.HasPrefix(strings.TrimSpace(lines[end]), "```") {
			end++
		}
		s.Body = strings.Join(lines[i+1:min(end, len(lines))], "\n")
		out = append(out, s)
		i = end
	}
	return out, errs
}

func markBefore(lines []string, i int) (Mark, error) {
	j := i - 1
	for j >= 0 && strings.TrimSpace(lines[j]) == "" {
		j--
	}
	if j < 0 {
		return Mark{}, errNoMark
	}
	m := marker.FindStringSubmatch(strings.TrimSpace(lines[j]))
	if m == nil {
		return Mark{}, errNoMark
	}
	if m[1] == "not runnable" {
		if strings.TrimSpace(m[2]) == "" {
			return Mark{}, fmt.Errorf("<!-- not runnable --> needs a reason: <!-- not runnable: why -->")
		}
		return Mark{Why: m[2]}, nil
	}
	mark := Mark{Runnable: true}
	for _, opt := range strings.Split(m[2], ",") {
		switch strings.TrimSpace(opt) {
		case "":
		case "serves":
			mark.Serves = true
		case "redis":
			mark.Redis = true
		default:
			return Mark{}, fmt.Errorf("unknown runnable option %q (known: serves, redis)", strings.TrimSpace(opt))
		}
	}
	if mark.Redis && !mark.Serves {
		return Mark{}, fmt.Errorf("runnable option redis needs serves")
	}
	return mark, nil
}

var errNoMark = fmt.Errorf("shell snippet without <!-- runnable --> or <!-- not runnable: why --> on the line before it")

// ServeAddr is the address a serving snippet is written with; the runner
// gives it a free one instead, so tests never depend on port 8080 being free.
const ServeAddr = "127.0.0.1:8080"

// RedisAddr is the Redis a snippet with the redis option watches.
const RedisAddr = "127.0.0.1:6379"

var consoleCmd = regexp.MustCompile(`(\./cmd/web|bin/keydeck)\b`)

// Rewrite gives a serving snippet the runner's addresses: ServeAddr and
// RedisAddr become addr and redis, and a console started without --addr
// (`go run ./cmd/web`, listening on 8080 by default) gets --addr addr.
func Rewrite(body, addr, redis string) string {
	lines := strings.Split(body, "\n")
	for i, l := range lines {
		code, comment, hasComment := strings.Cut(l, " #")
		if consoleCmd.MatchString(code) && !strings.Contains(code, "--addr") && !strings.Contains(code, "hash-password") {
			loc := consoleCmd.FindStringIndex(code)
			code = code[:loc[1]] + " --addr " + addr + code[loc[1]:]
		}
		l = code
		if hasComment {
			l += " #" + comment
		}
		l = strings.ReplaceAll(l, ServeAddr, addr)
		if redis != "" {
			l = strings.ReplaceAll(l, RedisAddr, redis)
		}
		lines[i] = l
	}
	return strings.Join(lines, "\n")
}
