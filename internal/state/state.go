// Package state is toolkit's per-user state directory, where what outlives
// one call is kept: jobs' records and the journals of commits in progress.
package state

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// Dir is the per-user state directory: $TOOLKIT_STATE, else
// $XDG_RUNTIME_DIR/toolkit, else /tmp/toolkit-UID, with the subdirectories
// subs in it. Each is made 0700 if it is not there; the directory is refused
// if another user owns it, others may use it, or it is not a directory (a
// link, say): what is kept there must be this user's alone.
func Dir(subs ...string) (string, error) {
	dir := os.Getenv("TOOLKIT_STATE")
	if dir == "" {
		if rt := os.Getenv("XDG_RUNTIME_DIR"); rt != "" {
			dir = filepath.Join(rt, "toolkit")
		} else {
			// /tmp itself, not $TMPDIR: a host that gives each call a
			// TMPDIR of its own keeps one state directory all the same.
			dir = filepath.Join("/tmp", "toolkit-"+strconv.Itoa(os.Getuid()))
		}
	}
	// Absolute: the paths in it are handed to processes in other
	// directories (a job's keeper runs in /) and compared as strings.
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return "", fmt.Errorf("the state directory %s: %w", dir, err)
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return "", fmt.Errorf("the state directory %s: %w", dir, err)
	}
	st, _ := fi.Sys().(*syscall.Stat_t)
	switch {
	case !fi.IsDir():
		return "", fmt.Errorf("the state directory %s is not a directory", dir)
	case st != nil && int(st.Uid) != os.Getuid():
		return "", fmt.Errorf("the state directory %s belongs to user %d, not to this user (%d)", dir, st.Uid, os.Getuid())
	case fi.Mode().Perm()&0o077 != 0:
		return "", fmt.Errorf("the state directory %s is open to other users (mode %04o); it must be 0700", dir, fi.Mode().Perm())
	}
	for _, sub := range subs {
		if err := os.Mkdir(filepath.Join(dir, sub), 0o700); err != nil && !errors.Is(err, os.ErrExist) {
			return "", fmt.Errorf("the state directory %s: %w", dir, err)
		}
	}
	return dir, nil
}
