// Package gittest runs git for the tests that check toolkit against it
// (walk, grep and glob against git's ignore rules, patch against git
// apply): in the given directory, reading no system or user
// configuration, with an identity for commits. git starts through
// internal/proc, as every child of toolkit's does, registered with its
// reaper.
package gittest

import (
	"context"
	"os"
	"testing"

	"toolkit/internal/proc"
)

// Output runs git with args in dir, with env added to its environment,
// and returns what it printed. A git that fails is an error: the first
// line it wrote to stderr, else its exit status.
func Output(dir string, env []string, args ...string) ([]byte, error) {
	full := append(os.Environ(), "HOME="+dir, "XDG_CONFIG_HOME="+dir, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	return proc.Output(context.Background(), proc.Child{Path: "git", Args: append([]string{"git"}, args...), Env: append(full, env...), Dir: dir})
}

// Run runs git with args in dir and returns what it printed; a git that
// fails fails the test, with what it said.
func Run(t testing.TB, dir string, args ...string) string {
	t.Helper()
	out, err := Output(dir, nil, args...)
	if err != nil {
		t.Fatalf("git %v: %v", args, err)
	}
	return string(out)
}
