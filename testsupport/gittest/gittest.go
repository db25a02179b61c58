// Package gittest runs git for the tests that check toolkit against it
// (walk, grep and glob against git's ignore rules, patch against git
// apply): in the given directory, reading no system or user
// configuration, with an identity for commits.
package gittest

import (
	"errors"
	"os"
	"os/exec"
	"testing"
)

// Command is git with args, to run in dir.
func Command(dir string, args ...string) *exec.Cmd {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOME="+dir, "XDG_CONFIG_HOME="+dir, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	return cmd
}

// Run runs git with args in dir and returns what it printed; a git that
// fails fails the test, with what it said.
func Run(t testing.TB, dir string, args ...string) string {
	t.Helper()
	out, err := Command(dir, args...).Output()
	if err != nil {
		var stderr []byte
		if ee, ok := errors.AsType[*exec.ExitError](err); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("git %v: %v\n%s", args, err, stderr)
	}
	return string(out)
}
