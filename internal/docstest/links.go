package docstest

import (
	"fmt"
	"regexp"
	"strings"
)

// A Link is a relative Markdown link or image (or a srcset of a picture).
type Link struct {
	Line   int
	Target string // the path, relative to the file ("" for an anchor of the file itself)
	Anchor string // after '#', "" when none
}

var (
	mdLink  = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	srcAttr = regexp.MustCompile(`(?:src|srcset|href)="([^"]+)"`)
	heading = regexp.MustCompile("^#{1,6}\\s+(.*?)\\s*$")
)

// Links returns the relative links of a Markdown file (outside code
// fences); absolute URLs are left alone.
func Links(text string) []Link {
	var out []Link
	inFence := false
	for i, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			inFence = !inFence
			continue
		}
		if inFence {
			continue
		}
		var targets []string
		for _, m := range mdLink.FindAllStringSubmatch(l, -1) {
			targets = append(targets, m[1])
		}
		for _, m := range srcAttr.FindAllStringSubmatch(l, -1) {
			targets = append(targets, m[1])
		}
		for _, t := range targets {
			if strings.Contains(t, "://") || strings.HasPrefix(t, "mailto:") {
				continue
			}
			path, anchor, _ := strings.Cut(t, "#")
			out = append(out, Link{Line: i + 1, Target: path, Anchor: anchor})
		}
	}
	return out
}

// Anchors are the ids GitHub gives a Markdown file's headings: lower case,
// punctuation dropped (but - and _), spaces as -, a repeated one numbered.
func Anchors(text string) map[string]bool {
	out := map[string]bool{}
	inFence := false
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			inFence = !inFence
			continue
		}
		m := heading.FindStringSubmatch(l)
		if inFence || m == nil {
			continue
		}
		id := Slug(m[1])
		for n := 1; out[id]; n++ {
			id = fmt.Sprintf("%s-%d", Slug(m[1]), n)
		}
		out[id] = true
	}
	return out
}

// Slug is GitHub's id of one heading's text.
func Slug(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(h) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_':
			b.WriteRune(r)
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r > 127 && isLetter(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

func isLetter(r rune) bool {
	return !strings.ContainsRune("—–’‘“”…·→←×≈≤≥", r)
}

// GluedTables are the lines right after a table row that are neither a
// row nor blank: Markdown renders such a paragraph as one more row.
func GluedTables(text string) []int {
	var out []int
	prev := ""
	for i, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(prev), "|") && strings.TrimSpace(l) != "" && !strings.HasPrefix(strings.TrimSpace(l), "|") {
			out = append(out, i+1)
		}
		prev = l
	}
	return out
}
