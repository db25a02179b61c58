// Package state is toolkit's per-user state directory, where what outlives
// one call is kept: jobs' records and the journals of commits in progress.
package state

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
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

// FirstTime reports whether note is news to the state directory: true the
// first time it is asked of a note, false after (a note said once, not on
// every call, where each would say the same: history off at /, bash not
// in the image).
func FirstTime(note string) bool {
	st, err := Dir("said")
	if err != nil {
		return true
	}
	sum := sha256.Sum256([]byte(note))
	f, err := os.OpenFile(filepath.Join(st, "said", hex.EncodeToString(sum[:8])), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return !errors.Is(err, fs.ErrExist)
	}
	f.Close()
	return true
}
