// Package replace puts a new content in a file's place whole or not at all:
// the one path by which write, edit and patch change files.
//
// Stage writes the content to a temporary file in the target's directory
// (an unnamed O_TMPFILE where the file system has them, else a named
// .NAME.toolkit-….tmp created exclusively), gives it the old file's owner and
// then its mode (chown clears setuid bits, so in that order), and syncs it.
// Commit then takes the directory's lock, checks that the target is as the
// caller expects (its sha256, or that there is none), renames the staged
// file over it (a new file is linked in with no replace: a file created
// since is never overwritten), lets the lock go and syncs the directory. A
// crash, a kill -9 or a full disk at any moment leaves the old content or
// the new one, and a failed write leaves no temporary file behind.
//
// Where the rename cannot be done, a file that exists is written in place
// instead, and the Result says why: a bind-mounted file (a container's
// /etc/hosts) cannot be renamed over, and a writable file in a directory
// toolkit may not write, or a sticky one, cannot be replaced.
package replace

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"

	"toolkit/internal/root"
	"toolkit/internal/tempfile"
)

// Staged is a new content written and synced beside its target, ready to
// take its place.
type Staged struct {
	r      *root.Root
	target string   // with no link in it (root.Resolve)
	dir    *os.File // the target's directory, opened inside the root
	shared bool     // dir is CommitAll's, for all its files there: not closed here
	f      *os.File // the new content, open for reading and writing
	name   string   // the named temporary file in dir; "" for an unnamed one
	// inPlace, when set, says why the content must be written into the
	// target itself: f is then a file of toolkit's own elsewhere.
	inPlace  string
	like     Like
	backup   string // CommitUndo's name for the old content, when planned (Plan)
	linkName string // the name an unnamed file takes before its rename, when planned
	want     string // the name a named temporary file takes, when a journal gave it one
	// oldLink: what is replaced is a symbolic link (undo's), taken away,
	// never followed.
	oldLink bool
	// linkDest, when set, is what the staged symbolic link points to: a
	// link, not a file, takes the target's place (StageLink).
	linkDest string
	// noSync: its content is not synced here; CommitAll syncs the file
	// system once for a batch.
	noSync bool

	// Old is the file being replaced; nil for a new one.
	Old os.FileInfo
	// OwnerKept says whether the new file got the old one's owner and
	// group; nil for a new file, or one written in place.
	OwnerKept *bool
}

// Expect is what the target must be just before it is replaced.
type Expect struct {
	Absent bool   // there must be no file
	SHA256 string // a prefix (12 or more hex digits) of its sha256; "" for any
	Dir    bool   // a directory must be there (CommitAll's: it goes, empty, for what takes its place)
}

// Check says whether a file whose sha256 is now (nil: no file) is what e
// expects: nil, or a *Changed.
func (e Expect) Check(now *string) error {
	switch {
	case e.Absent && now != nil,
		!e.Absent && e.SHA256 != "" && (now == nil || !strings.HasPrefix(*now, strings.ToLower(e.SHA256))):
		return &Changed{Now: now, Absent: e.Absent}
	}
	return nil
}

// IfMatch is what an if_match value expects: "absent", or a sha256 prefix.
func IfMatch(want string) Expect {
	if want == "absent" {
		return Expect{Absent: true}
	}
	return Expect{SHA256: want}
}

// Changed is the error of a Commit whose target is not what was expected.
type Changed struct {
	Now    *string // the target's sha256 now; nil when there is none
	Absent bool    // there was to be no file
	What   string  // what is there now, in words, where no sha256 says it
}

func (c *Changed) Error() string {
	switch {
	case c.What != "":
		return "changed since it was read (" + c.What + ")"
	case c.Now == nil:
		return "changed since it was read (it no longer exists)"
	case c.Absent:
		return "changed since it was read (it exists now, sha256 " + *c.Now + ")"
	}
	return "changed since it was read (sha256 now " + *c.Now + ")"
}

// Result says how a Commit went.
type Result struct {
	// InPlace, when set, says why the content was written into the target
	// itself, not atomically: "/etc/hosts is a mount point".
	InPlace string
}

// Stage writes a new content for target, a path with no link in it, with
// write, in a temporary file beside it. The directories on the way are made.
// It takes the mode and owner of the file it replaces.
func Stage(r *root.Root, target string, write func(io.Writer) error) (*Staged, error) {
	return StageLike(r, target, Like{}, write)
}

// Like is what a staged content takes its mode and owner from, when not from
// the file it replaces: a file moved to a new name keeps its own (patch's
// renames), and a mode a patch gives wins over both.
type Like struct {
	File os.FileInfo // nil: the file replaced, if any
	Mode os.FileMode // 0: File's mode (or the default for a new file)
}

// StageLike is Stage with the mode and owner taken as like says.
func StageLike(r *root.Root, target string, like Like, write func(io.Writer) error) (*Staged, error) {
	return stage(r, target, like, 0, nil, write)
}

// over says what a staged content may replace besides a regular file.
type over uint8

const (
	overLink over = 1 << iota // a symbolic link (undo's), taken away, never followed
	overDir                   // a directory CommitAll removes first: the content is a new file
)

// stage is StageLike; what lets what it replaces be a symbolic link or a
// directory; dir, when not nil, is the target's directory, already open
// (CommitAll's).
func stage(r *root.Root, target string, like Like, what over, dir *os.File, write func(io.Writer) error) (*Staged, error) {
	return stageNamed(r, target, like, what, dir, "", true, write)
}

// stageNamed is stage; a named temporary file, where one is made, is
// called name when it is not "" (a journal named it first). Without sync,
// the content is not synced: the caller syncs its file system once for
// many (CommitAll's batches).
func stageNamed(r *root.Root, target string, like Like, what over, dir *os.File, name string, sync bool, write func(io.Writer) error) (*Staged, error) {
	s := &Staged{r: r, target: target, like: like, want: name, noSync: !sync}
	if err := s.openDir(what, dir); err != nil {
		return nil, err
	}
	if err := s.open(); err != nil {
		if !refused(err) || s.Old == nil || s.oldLink {
			s.closeDir()
			if refused(err) {
				return nil, &DirError{Dir: filepath.Dir(target), Err: err}
			}
			return nil, err
		}
		// The directory takes no new file, but the file may be written.
		var err error
		if s.f, err = tempfile.Create(os.TempDir(), "toolkit-write-", ".tmp"); err != nil {
			s.closeDir()
			// Not the file's fault: the directory its content waits in.
			return nil, &DirError{Dir: os.TempDir(), Err: err}
		}
		_ = os.Remove(s.f.Name())
		s.inPlace = "the directory " + filepath.Dir(target) + " takes no new file"
	}
	if err := s.fill(write); err != nil {
		s.Abort()
		return nil, err
	}
	return s, nil
}

// openDir opens the target's directory (making it and those on the way),
// unless dir is that one, already open, then looks at what the target is
// now in it: a regular file, nothing, or, as what allows, a symbolic link
// or a directory (taken for nothing: it goes before the rename).
func (s *Staged) openDir(what over, dir *os.File) error {
	if dir != nil {
		s.dir, s.shared = dir, true
	} else {
		var err error
		if s.dir, err = OpenDir(s.r, filepath.Dir(s.target)); err != nil {
			return err
		}
	}
	old, err := lstatAt(s.dir, filepath.Base(s.target))
	switch {
	case err == nil && old.IsDir() && what&overDir != 0:
	case err == nil && old.IsDir():
		err = &fs.PathError{Op: "write", Path: s.target, Err: syscall.EISDIR}
	case err == nil && what&overLink != 0 && old.Mode()&fs.ModeSymlink != 0:
		s.Old, s.oldLink = old, true
	case err == nil && !old.Mode().IsRegular():
		err = &fs.PathError{Op: "write", Path: s.target, Err: ErrNotRegular}
	case err == nil:
		s.Old = old
	case errors.Is(err, fs.ErrNotExist):
		err = nil
	}
	if err != nil {
		s.closeDir()
	}
	return err
}

// OpenDir makes a target's directory and those on the way, and opens it
// with no link on the way (root.OpenDirect): the target's path has none.
func OpenDir(r *root.Root, dir string) (*os.File, error) {
	if err := r.MkdirAll(dir, 0o755); err != nil {
		return nil, &DirError{Dir: dir, Err: err, Make: true}
	}
	return r.OpenDirect(dir)
}

// closeDir closes the target's directory, unless it is CommitAll's.
func (s *Staged) closeDir() {
	if !s.shared {
		s.dir.Close()
	}
}

// StageLink readies a symbolic link to dest to take target's place
// (undo's, restoring a link): what it replaces may be a regular file or a
// link. Its temporary name is chosen now, and the link made only once a
// journal names it (PlaceLink): a kill before then leaves nothing behind.
func StageLink(r *root.Root, target, dest string, dir *os.File) (*Staged, error) {
	return stageLink(r, target, dest, overLink, dir)
}

// stageLink is StageLink; what says what it may replace besides a link.
func stageLink(r *root.Root, target, dest string, what over, dir *os.File) (*Staged, error) {
	s := &Staged{r: r, target: target, linkDest: dest}
	if err := s.openDir(what|overLink, dir); err != nil {
		return nil, err
	}
	s.name = tempfile.Name("."+filepath.Base(target)+".toolkit-", ".tmp")
	return s, nil
}

// PlaceLink makes a staged link under its temporary name.
func (s *Staged) PlaceLink() error {
	err := unix.Symlinkat(s.linkDest, int(s.dir.Fd()), s.name)
	switch {
	case err == nil:
		return nil
	case refused(err):
		return &DirError{Dir: filepath.Dir(s.target), Err: err}
	}
	return &fs.PathError{Op: "symlink", Path: s.target, Err: err}
}

// refused reports whether err is a directory refusing a new file.
func refused(err error) bool { return errors.Is(err, fs.ErrPermission) }

// open creates the temporary file in the target's directory.
func (s *Staged) open() error {
	if procFD() {
		fd, err := unix.Openat(int(s.dir.Fd()), ".", unix.O_TMPFILE|unix.O_RDWR|unix.O_CLOEXEC, 0o600)
		if err == nil {
			s.f = os.NewFile(uintptr(fd), s.target)
			return nil
		}
		if errors.Is(err, syscall.EACCES) || errors.Is(err, syscall.EPERM) {
			return &fs.PathError{Op: "create", Path: filepath.Dir(s.target), Err: err}
		}
	}
	s.name = s.want
	if s.name == "" {
		s.name = tempfile.Name("."+filepath.Base(s.target)+".toolkit-", ".tmp")
	}
	f, err := openAt(s.dir, s.name, unix.O_RDWR|unix.O_CREAT|unix.O_EXCL, 0o600)
	if err != nil {
		s.name = ""
		return err
	}
	s.f = f
	return nil
}

// procFD reports whether /proc/self/fd is there: an unnamed file is given
// its name through it.
var procFD = sync.OnceValue(func() bool {
	_, err := os.Stat("/proc/self/fd")
	return err == nil
})

// fill writes the content, gives it the old file's owner, then its mode,
// and syncs it.
func (s *Staged) fill(write func(io.Writer) error) error {
	if err := write(s.f); err != nil {
		return err
	}
	if s.inPlace != "" {
		return nil
	}
	mode := 0o644 &^ umask()
	from := s.Old
	if s.oldLink {
		from = nil // a link's mode and owner are not a file's
	}
	if s.like.File != nil {
		from = s.like.File
	}
	if from != nil {
		mode = from.Mode().Perm() | from.Mode()&(os.ModeSetuid|os.ModeSetgid|os.ModeSticky)
		kept := keepOwner(s.f, from)
		s.OwnerKept = &kept
	}
	if s.like.Mode != 0 {
		mode = s.like.Mode
	}
	if err := s.f.Chmod(mode); err != nil || s.noSync {
		return err
	}
	return s.f.Sync()
}

// ids are toolkit's effective user and group, which it never changes:
// asked once, not for each file of a commit.
var ids = sync.OnceValues(func() (int, int) { return os.Geteuid(), os.Getegid() })

// keepOwner gives f the old file's owner and group, and reports whether it
// could (only root, or the owner keeping its own group, may).
func keepOwner(f *os.File, old os.FileInfo) bool {
	st, ok := old.Sys().(*syscall.Stat_t)
	if !ok {
		return false
	}
	if uid, gid := ids(); int(st.Uid) == uid && int(st.Gid) == gid {
		return true
	}
	return f.Chown(int(st.Uid), int(st.Gid)) == nil
}

// Abort drops the staged content.
func (s *Staged) Abort() {
	if s.f != nil {
		s.f.Close()
	}
	if s.name != "" {
		_ = unix.Unlinkat(int(s.dir.Fd()), s.name, 0)
	}
	s.closeDir()
}

// Commit puts the staged content in the target's place if the target is as
// expect says, under the directory's lock, and syncs the directory. After
// Commit, the Staged is spent, whatever it returns.
func (s *Staged) Commit(expect Expect) (Result, error) {
	defer s.closeDir()
	defer s.f.Close()
	dfd := int(s.dir.Fd())
	// Other toolkits wait here from their last look to their rename, so
	// that of two with the same expectation one wins and the other sees
	// what the first did. A file system without locks goes without.
	if unix.Flock(dfd, unix.LOCK_EX) == nil {
		defer unix.Flock(dfd, unix.LOCK_UN)
	}
	base := filepath.Base(s.target)
	if err := s.check(expect); err != nil {
		s.drop()
		return Result{}, err
	}
	if s.inPlace != "" {
		return s.writeInPlace(s.inPlace)
	}
	err := s.rename(dfd, base, expect.Absent)
	switch {
	case err == nil:
	case s.Old != nil && errors.Is(err, syscall.EBUSY):
		return s.writeInPlace(s.target + " is a mount point")
	case s.Old != nil && (errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EACCES)):
		return s.writeInPlace("the directory " + filepath.Dir(s.target) + " lets no other file take its place")
	case errors.Is(err, syscall.EEXIST):
		s.drop()
		now, _ := s.current()
		return Result{}, &Changed{Now: now, Absent: true}
	default:
		s.drop()
		return Result{}, err
	}
	if err := s.dir.Sync(); err != nil {
		return Result{}, &Unsynced{Err: err}
	}
	return Result{}, nil
}

// rename puts the staged file at base in the directory: over what is there,
// or, with absent, only where nothing is.
func (s *Staged) rename(dfd int, base string, absent bool) error {
	if s.name == "" {
		// An unnamed file is given a name through /proc/self/fd: the target's
		// own when nothing may be there, else a temporary one to rename.
		from := "/proc/self/fd/" + strconv.Itoa(int(s.f.Fd()))
		if absent {
			return unix.Linkat(unix.AT_FDCWD, from, dfd, base, unix.AT_SYMLINK_FOLLOW)
		}
		s.name = s.linkName
		if s.name == "" {
			s.name = tempfile.Name("."+base+".toolkit-", ".tmp")
		}
		if err := unix.Linkat(unix.AT_FDCWD, from, dfd, s.name, unix.AT_SYMLINK_FOLLOW); err != nil {
			s.name = ""
			return err
		}
	}
	var err error
	if absent {
		err = unix.Renameat2(dfd, s.name, dfd, base, unix.RENAME_NOREPLACE)
		if errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOSYS) {
			// No RENAME_NOREPLACE here: a link fails as well where a file is.
			if err = unix.Linkat(dfd, s.name, dfd, base, 0); err == nil {
				_ = unix.Unlinkat(dfd, s.name, 0)
			}
		}
	} else {
		err = unix.Renameat(dfd, s.name, dfd, base)
	}
	if err == nil {
		s.name = ""
	}
	return err
}

// drop removes a named temporary file that is left.
func (s *Staged) drop() {
	if s.name != "" {
		_ = unix.Unlinkat(int(s.dir.Fd()), s.name, 0)
		s.name = ""
	}
}

// check compares the target now with what is expected.
func (s *Staged) check(expect Expect) error {
	if !expect.Absent && expect.SHA256 == "" {
		return nil
	}
	now, err := s.current()
	if err != nil {
		return err
	}
	return expect.Check(now)
}

// current is the target's sha256 now (a link's: its target's), nil when
// there is no file. It is looked up in the directory staged in, not
// followed.
func (s *Staged) current() (*string, error) {
	sum, err := hashAt(int(s.dir.Fd()), filepath.Base(s.target))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, &fs.PathError{Op: "read", Path: s.target, Err: err}
	}
	return &sum, nil
}

// writeInPlace copies the staged content into the target itself: opened
// for writing (the target is checked to be the same regular file), written,
// cut to its length, synced.
func (s *Staged) writeInPlace(why string) (Result, error) {
	s.drop()
	t, err := openAt(s.dir, filepath.Base(s.target), unix.O_WRONLY|unix.O_NONBLOCK|unix.O_NOCTTY, 0)
	if err != nil {
		return Result{}, fmt.Errorf("%s, and it cannot be written in place: %w", why, err)
	}
	defer t.Close()
	if fi, err := t.Stat(); err != nil || !fi.Mode().IsRegular() {
		return Result{}, &fs.PathError{Op: "write", Path: s.target, Err: ErrNotRegular}
	}
	if _, err := s.f.Seek(0, io.SeekStart); err != nil {
		return Result{}, err
	}
	n, err := io.Copy(struct{ io.Writer }{t}, s.f)
	if err == nil {
		err = t.Truncate(n)
	}
	if err == nil {
		err = t.Sync()
	}
	if err != nil {
		return Result{}, fmt.Errorf("written in place (%s), and it failed half way: %w", why, err)
	}
	s.OwnerKept = nil
	return Result{InPlace: why}, nil
}

// ErrNotRegular is the error for a target that is a FIFO, a socket or a
// device.
var ErrNotRegular = errors.New("not a regular file")

// DirError is a target's directory that cannot be made, or that takes no
// new file.
type DirError struct {
	Dir  string
	Err  error
	Make bool // it could not be made
}

func (e *DirError) Error() string {
	if e.Make {
		return "cannot create the directory " + e.Dir + ": " + root.Reason(e.Err)
	}
	return "cannot create a file in the directory " + e.Dir + ": " + root.Reason(e.Err)
}
func (e *DirError) Unwrap() error { return e.Err }

// Unsynced is the error of a Commit whose content is in place, but whose
// directory could not be synced.
type Unsynced struct{ Err error }

func (e *Unsynced) Error() string {
	return "written, but the directory could not be synced: " + root.Reason(e.Err)
}
func (e *Unsynced) Unwrap() error { return e.Err }

// SHA256 is the sha256 of b in hex, as write, edit and patch say it.
func SHA256(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// HashFile is the sha256 of a regular file's bytes.
func HashFile(r *root.Root, path string) (string, error) {
	f, err := r.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return "", err
	}
	defer f.Close()
	return hashOpen(f, path)
}

// hashOpen is the sha256 of the open file f, which must be a regular one.
func hashOpen(f *os.File, path string) (string, error) {
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return "", &fs.PathError{Op: "open", Path: path, Err: ErrNotRegular}
	}
	h := sha256.New()
	// A buffer no larger than the file: a patch hashes each file it
	// changes, most of them a few KiB.
	buf := make([]byte, min(max(fi.Size()+1, 4<<10), 256<<10))
	if _, err := io.CopyBuffer(h, struct{ io.Reader }{f}, buf); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// umask is the process's file mode creation mask, read once from /proc
// (setting it to read it back would race with other goroutines' creates).
var umask = sync.OnceValue(func() os.FileMode {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0o022
	}
	for l := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "Umask:"); ok {
			if n, err := strconv.ParseUint(strings.TrimSpace(v), 8, 32); err == nil {
				return os.FileMode(n)
			}
		}
	}
	return 0o022
})
