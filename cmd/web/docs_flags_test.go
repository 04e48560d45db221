package main

import (
	"flag"
	"os"
	"regexp"
	"strings"
	"testing"
)

// docs/configuration.md is the reference of every flag: each flag keydeck
// defines has a row of its own there (`--name` in the first column), and
// every --name the page mentions is a flag keydeck defines.
func TestConfigurationDocumentsEveryFlag(t *testing.T) {
	b, err := os.ReadFile("../../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	fs, _ := defineFlags("keydeck", &Config{})
	defined := map[string]bool{"help": true} // the flag package answers --help itself
	fs.VisitAll(func(f *flag.Flag) { defined[f.Name] = true })

	rows := map[string]bool{}
	for _, line := range strings.Split(doc, "\n") {
		if !strings.HasPrefix(line, "| `--") {
			continue
		}
		first, _, _ := strings.Cut(strings.TrimPrefix(line, "|"), "|")
		for _, m := range flagToken.FindAllStringSubmatch(first, -1) {
			rows[m[1]] = true
		}
	}
	fs.VisitAll(func(f *flag.Flag) {
		if !rows[f.Name] {
			t.Errorf("flag --%s has no row in docs/configuration.md (%s)", f.Name, f.Usage)
		}
	})
	for _, m := range flagToken.FindAllStringSubmatch(doc, -1) {
		if !defined[m[1]] {
			t.Errorf("docs/configuration.md mentions --%s, which keydeck does not define", m[1])
		}
	}
}

var flagToken = regexp.MustCompile(`(?:^|[^-\w])--([a-z][a-z0-9-]*)`)
