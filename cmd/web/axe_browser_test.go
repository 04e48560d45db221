package main

import (
	"context"
	_ "embed"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"golang.org/x/crypto/bcrypt"

	"github.com/keydeck/keydeck/internal/redistest"
)

// axeSource is axe-core, vendored by `npm run vendor` (package.json pins
// the version) so the test needs no Node. It is injected through the
// DevTools protocol, which the pages' CSP does not apply to; the console
// never serves it.
//
//go:embed testdata/axe.min.js
var axeSource string

// axeImpacts are axe's impact levels, worst first; the first two fail.
var axeImpacts = []string{"critical", "serious", "moderate", "minor"}

// axeViolation is one rule a page broke, as axeRun reports it.
type axeViolation struct {
	ID      string   `json:"id"`
	Impact  string   `json:"impact"`
	Help    string   `json:"help"`
	Nodes   int      `json:"nodes"`
	Targets []string `json:"targets"`
	Summary string   `json:"summary"`
}

func (v axeViolation) blocking() bool { return v.Impact == "critical" || v.Impact == "serious" }

// axeRun runs axe on the whole document and answers its violations, each
// with its first targets (CSS selectors) and what to fix on the first.
const axeRun = `axe.run(document, {resultTypes: ['violations']}).then(r => r.violations.map(v => ({
	id: v.id, impact: v.impact || 'minor', help: v.help, nodes: v.nodes.length,
	targets: v.nodes.slice(0, 6).map(n => n.target.join(' ')),
	summary: (v.nodes[0] && v.nodes[0].failureSummary || '').replace(/\s+/g, ' ').slice(0, 300),
})))`

// axeMode is a colour scheme the pages are checked in, emulated as the
// system's preference (prefers-color-scheme), as a person's browser sets it.
type axeMode string

const (
	axeLight axeMode = "light"
	axeDark  axeMode = "dark"
)

func emulateScheme(mode axeMode) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: string(mode)}},
		})
		return err
	})
}

// axePageResult is one page in one mode: its violations, every impact.
type axePageResult struct {
	Page, Mode, URL string
	Violations      []axeViolation
}

func (r axePageResult) count(impact string) (n int) {
	for _, v := range r.Violations {
		if v.Impact == impact {
			n++
		}
	}
	return n
}

// axeCheck runs axe in the tab's current page (injecting it when the page
// has not got it yet).
func axeCheck(ctx context.Context) ([]axeViolation, error) {
	has, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`typeof window.axe === 'object'`))
	if err != nil {
		return nil, err
	}
	if !has {
		if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](axeSource+"\n;undefined")); err != nil {
			return nil, fmt.Errorf("inject axe: %w", err)
		}
	}
	return chromedp.Run(ctx, chromedp.Evaluate[[]axeViolation](axeRun, chromedp.EvalAwaitPromise))
}

// Every page type of the console, on the embedded demo signed in as an
// admin (who sees every control), in light and in dark: axe-core finds no
// serious or critical violation (contrast, labels, landmarks, names of
// buttons and links, duplicate ids). The summary (page × mode → counts by
// impact) goes to the log, and to $KEYDECK_AXE_SUMMARY when set.
func TestBrowserAxe(t *testing.T) {
	// Not parallel: it drives two or more tabs through every page type,
	// which on two cores starved the live tests running beside it
	// (TestBrowserViolationAppearsLive timed out in three loaded runs and
	// passed alone); alone, before the parallel tests start, it is steady.
	if testing.Short() {
		t.Skip("visits every page type twice")
	}
	base, seed := startAxeConsole(t)
	seed()
	modes := []axeMode{axeLight, axeDark}
	if m := os.Getenv("KEYDECK_AXE_MODE"); m != "" { // a developer's shortcut: one mode
		modes = []axeMode{axeMode(m)}
	}
	// One tab a mode, side by side: the pages wait on the console as much
	// as on the browser.
	perMode := make([][]axePageResult, len(modes))
	t.Run("modes", func(t *testing.T) {
		for i, mode := range modes {
			t.Run(string(mode), func(t *testing.T) {
				t.Parallel()
				perMode[i] = axeAllPages(t, base, mode)
			})
		}
	})
	results := slices.Concat(perMode...)
	summary := axeSummary(results)
	t.Log("\n" + summary)
	if path := os.Getenv("KEYDECK_AXE_SUMMARY"); path != "" {
		if err := os.WriteFile(path, []byte(summary), 0o644); err != nil {
			t.Errorf("write the summary: %v", err)
		}
	}
	for _, r := range results {
		for _, v := range r.Violations {
			if v.blocking() {
				t.Errorf("%s (%s) %s: %s [%s] on %d element(s): %s\n\t%s", r.Page, r.Mode, r.URL, v.ID, v.Impact, v.Nodes,
					strings.Join(v.Targets, " | "), v.Summary)
			}
		}
	}
}

// axeAllPages signs in in a fresh browser context (the sign-in page is
// checked first) and checks every page of axePages in mode.
func axeAllPages(t *testing.T, base string, mode axeMode) []axePageResult {
	t.Helper()
	ctx := redistest.Browser(t)
	ctx, cancel := context.WithTimeout(ctx, 8*time.Minute) // bounds a failure only: a loaded machine takes seconds a page
	defer cancel()
	must(t, chromedp.Do(ctx, emulateScheme(mode)))
	var results []axePageResult
	only := os.Getenv("KEYDECK_AXE_PAGES") // a developer's shortcut: pages whose name contains one of these words
	for _, p := range axePages() {
		if only != "" && p.after == nil && !slices.ContainsFunc(strings.Split(only, ","), func(w string) bool { return strings.Contains(p.name, w) }) {
			continue
		}
		start := time.Now()
		url, err := p.open(ctx, base)
		if err != nil {
			t.Fatalf("%s (%s): open: %v", p.name, mode, err)
		}
		// A dark run that found the page light would check nothing new.
		if dark, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.documentElement.classList.contains('dark')`)); err != nil || dark != (mode == axeDark) {
			t.Errorf("%s (%s) %s: html.dark is %v (%v)", p.name, mode, url, dark, err)
		}
		opened := time.Now()
		vs, err := axeCheck(ctx)
		if err != nil {
			t.Fatalf("%s (%s) %s: axe: %v", p.name, mode, url, err)
		}
		results = append(results, axePageResult{Page: p.name, Mode: string(mode), URL: strings.TrimPrefix(url, base), Violations: vs})
		t.Logf("%s (%s): %d violations; opened in %v, checked in %v", p.name, mode, len(vs),
			opened.Sub(start).Round(time.Millisecond), time.Since(opened).Round(time.Millisecond))
		for _, v := range vs {
			t.Logf("\t%s [%s] on %d: %s\n\t\t%s", v.ID, v.Impact, v.Nodes, strings.Join(v.Targets, " | "), v.Summary)
		}
		screenshot(t, ctx, fmt.Sprintf("axe-%s-%s.png", strings.ReplaceAll(p.name, " ", "-"), mode))
		if p.after != nil {
			must(t, chromedp.Do(ctx, p.after))
		}
	}
	return results
}

// axeSummary is the table of counts by impact, one row per page and mode,
// then every violation's rule once with where it was seen.
func axeSummary(results []axePageResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "| page | mode | %s |\n|---|---|%s\n", strings.Join(axeImpacts, " | "), strings.Repeat("---|", len(axeImpacts)))
	rules := map[string][]string{}
	for _, r := range results {
		counts := make([]string, len(axeImpacts))
		for i, imp := range axeImpacts {
			counts[i] = fmt.Sprint(r.count(imp))
		}
		fmt.Fprintf(&b, "| %s | %s | %s |\n", r.Page, r.Mode, strings.Join(counts, " | "))
		for _, v := range r.Violations {
			k := v.Impact + " " + v.ID + ": " + v.Help
			rules[k] = append(rules[k], r.Page+" ("+r.Mode+")")
		}
	}
	keys := make([]string, 0, len(rules))
	for k := range rules {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if len(keys) > 0 {
		b.WriteString("\nRules broken (impact, rule: pages):\n")
	}
	for _, k := range keys {
		where := strings.Join(rules[k], ", ")
		if len(rules[k]) == len(results) {
			where = "every page checked"
		}
		fmt.Fprintf(&b, "- %s — %s\n", k, where)
	}
	return b.String()
}

// axeUsers is a users file with one admin, "ada".
func axeUsers(t *testing.T) string {
	t.Helper()
	hash, _ := bcrypt.GenerateFromPassword([]byte("admin-password"), bcrypt.MinCost)
	users := filepath.Join(t.TempDir(), "users.yaml")
	if err := os.WriteFile(users, []byte("users:\n  - name: ada\n    role: admin\n    password_hash: \""+string(hash)+"\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return users
}
