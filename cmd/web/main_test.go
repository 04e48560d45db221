package main

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestMain lets tests run the real main() in a child process.
func TestMain(m *testing.M) {
	if os.Getenv("KEYDECK_TEST_RUN_MAIN") == "1" {
		os.Args = append([]string{"keydeck"}, strings.Fields(os.Getenv("KEYDECK_TEST_ARGS"))...)
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestInvalidFlagExitsWithStatus2(t *testing.T) {
	tests := []struct {
		args, want string
	}{
		{"--redis nonsense", "keydeck: invalid value for flag -redis: want NAME=URL"},
		{"--redis a=redis://:hunter2@h:bad", "keydeck: invalid value for flag -redis: a: invalid Redis URL"},
		{"--addr nope", "keydeck: invalid value \"nope\" for flag -addr"},
	}
	for _, tt := range tests {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "KEYDECK_TEST_RUN_MAIN=1", "KEYDECK_TEST_ARGS="+tt.args)
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 2 {
			t.Fatalf("%s: err = %v, want exit status 2", tt.args, err)
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		if len(lines) != 1 || !strings.HasPrefix(lines[0], tt.want) {
			t.Fatalf("%s: output %q, want one line starting %q", tt.args, out, tt.want)
		}
		if strings.Contains(string(out), "hunter2") {
			t.Fatalf("%s: output leaks the password", tt.args)
		}
	}
}
