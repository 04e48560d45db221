package metrics_test

import (
	"os/exec"
	"path/filepath"
	"testing"
)

// The example alert rules in docs/prometheus are valid and pass their unit
// tests (promtool test rules). promtool comes with Debian's prometheus
// package, which `make deps` installs; without it the test says so.
func TestPromtoolRules(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("promtool is not installed (make deps installs Debian's prometheus package)")
	}
	dir := filepath.Join("..", "..", "docs", "prometheus")
	for _, args := range [][]string{{"check", "rules", "rules.yml"}, {"test", "rules", "rules_test.yml"}} {
		cmd := exec.Command(promtool, args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("promtool %v: %v\n%s", args, err, out)
		}
	}
}
