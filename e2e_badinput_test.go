package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestBadInput: malformed inputs across the applets, each a usage error:
// exit 2, one line on stderr, nothing on stdout, never a panic or a stack.
func TestBadInput(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	big := bytes.Repeat([]byte(" "), 64<<20+1) // 64 MiB + 1 of input
	copy(big, `{"command":"true"}`)
	bigPath := dir + "/big.json"
	if err := os.WriteFile(bigPath, big, 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		args  []string
		stdin string
		file  string // stdin from this file instead
	}{
		{"shell invalid json", []string{"shell"}, `{"command":`, ""},
		{"shell not an object", []string{"shell"}, `["ls"]`, ""},
		{"shell a string", []string{"shell"}, `"ls"`, ""},
		{"shell null", []string{"shell"}, `null`, ""},
		{"shell empty input", []string{"shell"}, ``, ""},
		{"shell only spaces", []string{"shell"}, "  \n\t ", ""},
		{"shell trailing data", []string{"shell"}, `{"command":"ls"} x`, ""},
		{"shell two objects", []string{"shell"}, `{"command":"ls"}{"command":"ls"}`, ""},
		{"shell unknown field", []string{"shell"}, `{"comand":"ls"}`, ""},
		{"shell field twice", []string{"shell"}, `{"command":"ls","command":"rm"}`, ""},
		{"shell wrong type", []string{"shell"}, `{"command":["ls"]}`, ""},
		{"shell empty command", []string{"shell"}, `{"command":""}`, ""},
		{"shell empty command person", []string{"shell", ""}, ``, ""},
		{"shell missing command", []string{"shell"}, `{"cwd":"/"}`, ""},
		{"shell nul in command", []string{"shell"}, `{"command":"ls\u0000"}`, ""},
		{"shell nul in cwd", []string{"shell"}, `{"command":"ls","cwd":"/tmp\u0000x"}`, ""},
		{"shell huge timeout", []string{"shell"}, `{"command":"ls","timeout_secs":1e999}`, ""},
		{"shell huge integer", []string{"shell"}, `{"command":"ls","timeout_secs":123456789012345678901234567890}`, ""},
		{"shell negative timeout", []string{"shell"}, `{"command":"ls","timeout_secs":-1}`, ""},
		{"shell zero timeout", []string{"shell"}, `{"command":"ls","timeout_secs":0}`, ""},
		{"shell fractional timeout", []string{"shell"}, `{"command":"ls","timeout_secs":0.5}`, ""},
		{"shell timeout string", []string{"shell"}, `{"command":"ls","timeout_secs":"10"}`, ""},
		{"shell env not object", []string{"shell"}, `{"command":"ls","env":"A=1"}`, ""},
		{"shell env value number", []string{"shell"}, `{"command":"ls","env":{"A":1}}`, ""},
		{"shell env bad name", []string{"shell"}, `{"command":"ls","env":{"A=B":"1"}}`, ""},
		{"shell flags and json mixed", []string{"shell", "--timeout", "5"}, `{"command":"ls"}`, ""},
		{"shell unknown flag", []string{"shell", "--colour", "ls"}, ``, ""},
		{"shell bad flag value", []string{"shell", "--timeout", "soon", "ls"}, ``, ""},
		{"shell negative max output", []string{"shell", "--max-output", "-1", "ls"}, ``, ""},
		{"shell 64 MiB + 1", []string{"shell"}, ``, bigPath},
		{"shell deep nesting", []string{"shell"}, `{"command":"ls","env":` + strings.Repeat(`{"a":`, 200) + strings.Repeat("}", 200) + `}`, ""},
		{"shell control char", []string{"shell"}, "{\"command\":\"a\tb\"}", ""},
		{"shell bad escape", []string{"shell"}, `{"command":"\x41"}`, ""},
		{"read negative limit", []string{"read"}, `{"path":"x","limit":-5}`, ""},
		{"read zero limit", []string{"read", "--limit", "0", "x"}, ``, ""},
		{"read nul in path", []string{"read"}, `{"path":"a\u0000b"}`, ""},
		{"read empty path", []string{"read"}, `{"path":""}`, ""},
		{"read offset string", []string{"read"}, `{"path":"x","offset":"-1"}`, ""},
		{"read two paths", []string{"read", "a", "b"}, ``, ""},
		{"read flags and json mixed", []string{"read", "--offset", "3"}, `{"path":"x"}`, ""},
		{"read huge offset", []string{"read"}, `{"path":"x","offset":1e30}`, ""},
		{"write no content", []string{"write"}, `{"path":"x"}`, ""},
		{"write content number", []string{"write"}, `{"path":"x","content":5}`, ""},
		{"write bad if_match", []string{"write"}, `{"path":"x","content":"y","if_match":"nope"}`, ""},
		{"write nul in path", []string{"write"}, `{"path":"x\u0000","content":"y"}`, ""},
		{"write unknown field", []string{"write"}, `{"path":"x","contents":"y"}`, ""},
		{"unknown applet", []string{"shel"}, ``, ""},
		{"unknown applet json", []string{"--json", "exec"}, ``, ""},
		{"empty applet name", []string{""}, ``, ""},
		{"unknown top flag", []string{"--frobnicate"}, ``, ""},
		{"schema unknown format", []string{"schema", "--format", "yaml"}, ``, ""},
		{"schema unknown tool", []string{"schema", "grp"}, ``, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cmd := toolkitCmd(tc.args...)
			cmd.Dir = dir
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if tc.file != "" {
				f, err := os.Open(tc.file)
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				cmd.Stdin = f
			} else {
				cmd.Stdin = strings.NewReader(tc.stdin)
			}
			err := cmd.Run()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 2 {
				t.Fatalf("exit %v, want 2; stdout %q stderr %q", err, stdout.String(), stderr.String())
			}
			jsonOut := len(tc.args) > 0 && tc.args[0] == "--json"
			if jsonOut {
				if !strings.HasPrefix(stdout.String(), `{"ok":false,"error":`) || stderr.Len() != 0 {
					t.Fatalf("stdout %q stderr %q", stdout.String(), stderr.String())
				}
				return
			}
			if stdout.Len() != 0 {
				t.Errorf("stdout %q", stdout.String())
			}
			s := stderr.String()
			if strings.Count(s, "\n") != 1 || !strings.HasSuffix(s, "\n") || !strings.HasPrefix(s, "toolkit") {
				t.Errorf("stderr is not one line: %q", s)
			}
			if strings.Contains(s, "panic") || strings.Contains(s, "goroutine") {
				t.Errorf("stderr shows a panic: %q", s)
			}
		})
	}
}
