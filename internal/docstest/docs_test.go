package docstest

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/keydeck/keydeck/internal/redistest"
)

// root is the repository, where the docs' commands are written to run.
const root = "../.."

// docs are README.md and docs/*.md, README first (its snippets build the
// binary the others use), each with its text.
func docs(t *testing.T) ([]string, map[string]string) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	files = append([]string{filepath.Join(root, "README.md")}, files...)
	text := map[string]string{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		text[f] = string(b)
	}
	return files, text
}

func TestReadmeIsShort(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(b, []byte("\n")); n > 200 {
		t.Errorf("README.md has %d lines; keep it at 200 or fewer and move the rest to docs/", n)
	}
}

func TestDocsSnippetsAreMarked(t *testing.T) {
	files, text := docs(t)
	for _, f := range files {
		if _, errs := Snippets(f, text[f]); len(errs) > 0 {
			for _, err := range errs {
				t.Error(err)
			}
		}
	}
}

func TestDocsLinksResolve(t *testing.T) {
	files, text := docs(t)
	for _, f := range files {
		for _, l := range Links(text[f]) {
			target := f
			if l.Target != "" {
				target = filepath.Join(filepath.Dir(f), l.Target)
				if _, err := os.Stat(target); err != nil {
					t.Errorf("%s:%d: link to %s: %v", f, l.Line, l.Target, err)
					continue
				}
			}
			if l.Anchor == "" || !strings.HasSuffix(target, ".md") {
				continue
			}
			b, err := os.ReadFile(target)
			if err != nil {
				t.Fatal(err)
			}
			if !Anchors(string(b))[l.Anchor] {
				t.Errorf("%s:%d: %s has no heading #%s", f, l.Line, target, l.Anchor)
			}
		}
	}
}

func TestDocsNoParagraphGluedToATable(t *testing.T) {
	files, text := docs(t)
	for _, f := range files {
		for _, n := range GluedTables(text[f]) {
			t.Errorf("%s:%d: a line right after a table renders as one more row: put a blank line before it", f, n)
		}
	}
}

// Every snippet marked runnable runs as written, in the repository, in the
// order a reader meets them: plain ones must exit 0; serving ones must
// answer /healthz, / and /readyz (every connection reachable) before they
// are stopped.
func TestDocsSnippetsRun(t *testing.T) {
	files, text := docs(t)
	for _, f := range files {
		snippets, _ := Snippets(f, text[f])
		for _, s := range snippets {
			if !s.Mark.Runnable {
				continue
			}
			name := fmt.Sprintf("%s:%d", filepath.Base(f), s.Line)
			if s.Mark.Serves {
				runServing(t, name, s)
			} else {
				runPlain(t, name, s.Body)
			}
		}
	}
}

func shell(ctx context.Context, body string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, "bash", "-e", "-o", "pipefail", "-c", body)
	cmd.Dir = root
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// go run's child is in the same group: end them together.
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

func runPlain(t *testing.T, name, body string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out, err := shell(ctx, body).CombinedOutput()
	if err != nil {
		t.Errorf("%s: %v\n%s\n--- output:\n%s", name, err, body, out)
	}
}

func runServing(t *testing.T, name string, s Snippet) {
	t.Helper()
	addr := fmt.Sprintf("127.0.0.1:%d", redistest.FreePort(t))
	redis := ""
	if s.Mark.Redis {
		redis = redistest.Start(t).Addr
	}
	body := Rewrite(s.Body, addr, redis)
	ctx, cancel := context.WithCancel(context.Background())
	var out bytes.Buffer
	cmd := shell(ctx, body)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() { cancel(); <-exited }()
	for _, path := range []string{"/healthz", "/", "/readyz"} {
		if err := answers(ctx, "http://"+addr+path, exited); err != nil {
			t.Errorf("%s: %s: %v\n%s\n--- output:\n%s", name, path, err, body, out.String())
			return
		}
	}
}

// answers waits until url answers 200 (go run compiles first: minutes on
// a cold cache), or the snippet exits.
func answers(ctx context.Context, url string, exited chan error) error {
	deadline := time.Now().Add(4 * time.Minute)
	gap := 50 * time.Millisecond
	for {
		r, err := http.Get(url)
		if err == nil {
			r.Body.Close()
			if r.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case err := <-exited:
			exited <- err
			return fmt.Errorf("the snippet ended before %s answered 200: %v", url, err)
		case <-time.After(gap):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no 200 within 4m (last: %v)", err)
		}
		gap = min(2*gap, time.Second)
	}
}
