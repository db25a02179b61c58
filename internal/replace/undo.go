package replace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"

	"toolkit/internal/root"
	"toolkit/internal/tempfile"
)

// Undo puts back what a commit of many changes did to one file, should a
// later one fail: patch's all or none. Until Done or Revert, the file's
// old content is kept under a name of its own beside it.
type Undo struct {
	dir    *os.File
	base   string // the file's name in dir
	backup string // the old file's name while the change is not done; "" when there was none
	added  bool   // the change made the file: undoing removes it
	shared bool   // dir is CommitAll's: not closed here
	// backupDir, when not nil, is where backup is (CommitAll's): the
	// directory above one the commit removes; again then finds the file's
	// directory made anew, should Revert put it back.
	backupDir *os.File
	again     func() (*os.File, error)
}

// CommitUndo is Commit for one of many changes: the rename is done, never
// a write in place, and the old content is kept until Done, so that Revert
// can put it back. The directory is not synced: Done syncs the
// directories once all is in place.
func (s *Staged) CommitUndo(expect Expect) (*Undo, error) {
	defer s.f.Close()
	dfd := int(s.dir.Fd())
	if unix.Flock(dfd, unix.LOCK_EX) == nil {
		defer unix.Flock(dfd, unix.LOCK_UN)
	}
	u := &Undo{dir: s.dir, base: filepath.Base(s.target), shared: s.shared}
	if err := s.check(expect); err != nil {
		s.drop()
		u.close()
		return nil, err
	}
	if s.inPlace != "" {
		u.close()
		return nil, fmt.Errorf("%s, so the file could not be changed along with the others", s.inPlace)
	}
	absent := expect.Absent || s.Old == nil
	if !absent {
		u.backup = s.backup
		if u.backup == "" {
			u.backup = tempfile.Name("."+u.base+".toolkit-", ".old")
		}
		if err := unix.Linkat(dfd, u.base, dfd, u.backup, 0); err != nil {
			s.drop()
			u.close()
			return nil, &fs.PathError{Op: "keep", Path: s.target, Err: err}
		}
	}
	if err := s.rename(dfd, u.base, absent); err != nil {
		s.drop()
		u.forget()
		u.close()
		if errors.Is(err, syscall.EEXIST) {
			now, _ := s.current()
			return nil, &Changed{Now: now, Absent: true}
		}
		return nil, &fs.PathError{Op: "rename", Path: s.target, Err: err}
	}
	u.added = absent
	return u, nil
}

// removeUndo removes path, in its directory dir (CommitAll's), if it is as
// expect says, keeping its content under the name backup until done: in
// backupDir, where not nil (the directory above one the commit removes;
// again finds path's directory once it is made anew), else beside it.
// Revert puts it back.
func removeUndo(r *root.Root, dir *os.File, path string, expect Expect, backup string, backupDir *os.File, again func() (*os.File, error)) (*Undo, error) {
	dfd := int(dir.Fd())
	if unix.Flock(dfd, unix.LOCK_EX) == nil {
		defer unix.Flock(dfd, unix.LOCK_UN)
	}
	u := &Undo{dir: dir, base: filepath.Base(path), shared: true, backupDir: backupDir, again: again}
	s := &Staged{r: r, target: path, dir: dir, shared: true}
	if err := s.check(expect); err != nil {
		u.close()
		return nil, err
	}
	u.backup = backup
	if u.backup == "" {
		u.backup = tempfile.Name("."+u.base+".toolkit-", ".old")
	}
	if err := unix.Renameat(dfd, u.base, u.backupFd(), u.backup); err != nil {
		u.close()
		return nil, &fs.PathError{Op: "remove", Path: path, Err: err}
	}
	return u, nil
}

// backupFd is the directory the old content is kept in.
func (u *Undo) backupFd() int {
	if u.backupDir != nil {
		return int(u.backupDir.Fd())
	}
	return int(u.dir.Fd())
}

// Revert puts the old file back (or removes the new one).
func (u *Undo) Revert() error {
	defer u.close()
	dfd := int(u.dir.Fd())
	if u.again != nil {
		// Its directory went and was made again: the one there now.
		d, err := u.again()
		if err != nil {
			return err
		}
		defer d.Close()
		dfd = int(d.Fd())
	}
	switch {
	case u.backup != "":
		return unix.Renameat(u.backupFd(), u.backup, dfd, u.base)
	case u.added:
		return unix.Unlinkat(dfd, u.base, 0)
	}
	return nil
}

// forget removes the old content kept.
func (u *Undo) forget() {
	if u.backup != "" {
		_ = unix.Unlinkat(u.backupFd(), u.backup, 0)
		u.backup = ""
	}
}

func (u *Undo) close() {
	if u.dir != nil {
		if !u.shared {
			u.dir.Close()
		}
		u.dir = nil
	}
}
