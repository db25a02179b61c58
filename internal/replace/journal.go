package replace

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"toolkit/internal/outcome"
	"toolkit/internal/root"
	"toolkit/internal/state"
	"toolkit/internal/tempfile"
	"toolkit/internal/text"
)

// A journal is the record of a commit of many changes (patch's all or none)
// kept in toolkit's state directory, journals/, from before the first rename
// until the last old content is let go. It is written whole, synced, and
// only then given its name (NAME.json), so a journal there is always
// complete; every rename done, NAME.json.done is made beside it. Its file is
// locked while its commit runs: a journal that can be locked is one whose
// toolkit died (kill -9, a crash, the machine stopped) in the middle, and
// Recover puts its files back as they were, or, with the .done mark, lets
// their old contents go.
type Journal struct {
	path string
	f    *os.File
}

type journalRecord struct {
	Steps []JournalStep `json:"steps"`
}

// JournalStep is one file of a commit, by its host path.
type JournalStep struct {
	Dir  string `json:"dir"`  // absolute
	Name string `json:"name"` // the file's name in Dir
	// Backup is the old content's name in Dir while the change is not done;
	// "" when there was no file.
	Backup string `json:"backup,omitempty"`
	// BackupDir is where Backup is, where not in Dir: the directory above
	// one the commit removes (absolute).
	BackupDir string `json:"backup_dir,omitempty"`
	// Temp is the name a new content has in Dir before its rename, if it
	// has one.
	Temp string `json:"temp,omitempty"`
	// NewSHA256 is the new content's, where no file was: undoing removes the
	// file only if it is that content.
	NewSHA256 string `json:"new_sha256,omitempty"`
	// RemoveDir: Name is a directory to remove once every file is in place,
	// if it is empty then.
	RemoveDir bool `json:"remove_dir,omitempty"`
	// MakeDir: Name is a directory the commit makes; put back, it goes if
	// it is empty.
	MakeDir bool `json:"make_dir,omitempty"`
	// RmDir: Name is an empty directory the commit removes (something
	// else takes its place); put back, it is made again with Mode.
	RmDir bool `json:"rm_dir,omitempty"`
	// SetMode: Name is a directory the commit gives a mode; put back, it
	// gets Mode again.
	SetMode bool `json:"set_mode,omitempty"`
	// Mode is an RmDir's or SetMode's directory's mode before the commit:
	// its permissions, setuid, setgid and sticky bits.
	Mode uint32 `json:"mode,omitempty"`
}

// Plan chooses the names CommitUndo will use for a staged content, so that
// a journal can list them before the rename: the old content's backup and
// the new one's temporary name.
func (s *Staged) Plan(r *root.Root, expect Expect, content []byte) (JournalStep, error) {
	step, err := stepFor(r, s.target)
	if err != nil {
		return step, err
	}
	absent := expect.Absent || s.Old == nil
	switch {
	case !absent:
		s.backup = tempfile.Name("."+step.Name+".toolkit-", ".old")
		step.Backup = s.backup
		if s.name == "" {
			s.linkName = tempfile.Name("."+step.Name+".toolkit-", ".tmp")
		}
	default:
		step.NewSHA256 = SHA256(content)
	}
	step.Temp = s.name
	if step.Temp == "" {
		step.Temp = s.linkName
	}
	return step, nil
}

// PlanRemove chooses the name RemoveUndo will keep path's content under.
func PlanRemove(r *root.Root, path string) (JournalStep, error) {
	step, err := stepFor(r, path)
	step.Backup = tempfile.Name("."+step.Name+".toolkit-", ".old")
	return step, err
}

func stepFor(r *root.Root, target string) (JournalStep, error) {
	dir, err := r.HostPath(filepath.Dir(target))
	if err != nil {
		return JournalStep{}, err
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return JournalStep{}, err
	}
	return JournalStep{Dir: dir, Name: filepath.Base(target)}, nil
}

// BeginJournal writes and syncs a journal of steps, and holds its lock
// until Close.
func BeginJournal(steps []JournalStep) (*Journal, error) {
	state, err := state.Dir("journals")
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(state, "journals")
	b, err := json.Marshal(journalRecord{Steps: steps})
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, tempfile.Name("commit-", ".json"))
	// Unnamed until it is whole: a kill before its name is given leaves
	// nothing behind. Where there are no unnamed files (or no /proc to
	// name one through), a named one.
	var f *os.File
	named := false
	if procFD() {
		if fd, err := unix.Open(dir, unix.O_TMPFILE|unix.O_RDWR|unix.O_CLOEXEC, 0o600); err == nil {
			f = os.NewFile(uintptr(fd), path)
		}
	}
	if f == nil {
		if f, err = tempfile.Create(dir, "commit-", ".tmp"); err != nil {
			return nil, err
		}
		named = true
	}
	j := &Journal{path: f.Name(), f: f}
	err = unix.Flock(int(f.Fd()), unix.LOCK_EX)
	if err == nil {
		_, err = f.Write(b)
	}
	if err == nil {
		err = f.Sync()
	}
	if err == nil && named {
		err = os.Rename(f.Name(), path)
	} else if err == nil {
		err = unix.Linkat(unix.AT_FDCWD, "/proc/self/fd/"+strconv.Itoa(int(f.Fd())), unix.AT_FDCWD, path, unix.AT_SYMLINK_FOLLOW)
	}
	if err == nil {
		j.path = path
		err = syncDir(dir)
	}
	if err != nil {
		j.Close()
		return nil, err
	}
	return j, nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// MarkDone records that every file is in place.
func (j *Journal) MarkDone() error {
	f, err := os.OpenFile(j.path+".done", os.O_WRONLY|os.O_CREATE|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return err
	}
	f.Close()
	return syncDir(filepath.Dir(j.path))
}

// Close removes the journal: its commit is done, or undone.
func (j *Journal) Close() {
	os.Remove(j.path)
	os.Remove(j.path + ".done")
	j.f.Close()
}

// Recover finds the journals of commits whose toolkit died, each of whose
// files is under r's directory (any, without a root), puts their files back
// as they were before the commit began (or, for one whose files were all in
// place, finishes it), removes what they left, and says what it did, a line
// each: "[recovered: an interrupted patch of 300 files was undone]".
func Recover(r *root.Root) []string {
	dir, err := state.Dir("journals")
	if err != nil {
		return nil
	}
	entries, err := os.ReadDir(filepath.Join(dir, "journals"))
	if err != nil {
		return nil
	}
	var under string
	if r != nil {
		under, _ = filepath.Abs(r.Dir())
	}
	var said []string
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".json") {
			clean(filepath.Join(dir, "journals"), e, entries)
			continue
		}
		if line := recoverOne(filepath.Join(dir, "journals", e.Name()), under); line != "" {
			said = append(said, line)
		}
	}
	return said
}

// recoverOne recovers one journal, if its toolkit is gone and its files are
// under the directory under ("" for any).
func recoverOne(path, under string) string {
	f, err := os.OpenFile(path, os.O_RDWR|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return ""
	}
	defer f.Close()
	if unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) != nil {
		return "" // its commit is running
	}
	b, err := os.ReadFile(path)
	var rec journalRecord
	if err != nil || json.Unmarshal(b, &rec) != nil {
		return ""
	}
	_, err = os.Lstat(path + ".done")
	done := err == nil
	for _, s := range rec.Steps {
		if under != "" && !root.Within(s.Dir, under) {
			return ""
		}
	}
	// Put back the last first; finished in order (a directory to remove
	// comes after those under it).
	steps := slices.Clone(rec.Steps)
	if !done {
		slices.Reverse(steps)
	}
	failed := 0
	for _, step := range steps {
		if err := recoverStep(step, done); err != nil {
			failed++
		}
	}
	if failed > 0 {
		return fmt.Sprintf("[not recovered: an interrupted patch of %s left %d of them as they were; its journal %s stays]", text.Count(int64(len(rec.Steps)), "file"), failed, path)
	}
	os.Remove(path)
	os.Remove(path + ".done")
	if done {
		return fmt.Sprintf("[recovered: an interrupted patch of %s was finished: every file was in place]", text.Count(int64(len(rec.Steps)), "file"))
	}
	return fmt.Sprintf("[recovered: an interrupted patch of %s was undone]", text.Count(int64(len(rec.Steps)), "file"))
}

// clean removes what a toolkit killed at the edges of a commit left in the
// journals' directory: a .done mark whose journal is gone, and a journal
// being written when it was killed (not locked, and a minute old: one being
// written now is locked within microseconds of its making).
func clean(dir string, e os.DirEntry, entries []os.DirEntry) {
	path := filepath.Join(dir, e.Name())
	if name, ok := strings.CutSuffix(e.Name(), ".json.done"); ok && !exists(entries, name+".json") {
		os.Remove(path)
		return
	}
	if !strings.HasSuffix(e.Name(), ".tmp") {
		return
	}
	fi, err := e.Info()
	if err != nil || time.Since(fi.ModTime()) < time.Minute {
		return
	}
	f, err := os.OpenFile(path, os.O_RDWR|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return
	}
	defer f.Close()
	if unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) == nil {
		os.Remove(path)
	}
}

func exists(entries []os.DirEntry, name string) bool {
	for _, e := range entries {
		if e.Name() == name {
			return true
		}
	}
	return false
}

// recoverStep puts one file back (done: lets its old content go), and
// removes its temporary name.
func recoverStep(s JournalStep, done bool) error {
	bfd := -1 // where Backup is kept
	if s.BackupDir != "" && s.Backup != "" {
		b, err := os.Open(s.BackupDir)
		if err != nil {
			return err
		}
		defer b.Close()
		bfd = int(b.Fd())
		if done {
			// Its directory went with the commit.
			if err := unix.Unlinkat(bfd, s.Backup, 0); err != nil && !errors.Is(err, syscall.ENOENT) {
				return err
			}
			return b.Sync()
		}
	}
	d, err := os.Open(s.Dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // nothing was made there
	}
	if err != nil {
		return err
	}
	defer d.Close()
	dfd := int(d.Fd())
	if bfd < 0 {
		bfd = dfd
	}
	if s.Temp != "" {
		_ = unix.Unlinkat(dfd, s.Temp, 0)
	}
	var first error
	switch {
	case done && (s.MakeDir || s.RmDir || s.SetMode):
	case s.MakeDir:
		_ = unix.Unlinkat(dfd, s.Name, unix.AT_REMOVEDIR) // only an empty one goes
	case s.RmDir:
		if err := remake(d, s.Name, ModeOf(s.Mode)); err != nil && !errors.Is(err, syscall.EEXIST) {
			first = err
		}
	case s.SetMode:
		if err := chmodDir(d, s.Name, ModeOf(s.Mode)); err != nil && !errors.Is(err, syscall.ENOENT) {
			first = err
		}
	case s.RemoveDir:
		if done {
			_ = unix.Unlinkat(dfd, s.Name, unix.AT_REMOVEDIR) // only an empty one goes
		}
	case done && s.Backup != "":
		if err := unix.Unlinkat(bfd, s.Backup, 0); err != nil && !errors.Is(err, syscall.ENOENT) {
			first = err
		}
	case s.Backup != "":
		err := unix.Renameat(bfd, s.Backup, dfd, s.Name)
		switch {
		case errors.Is(err, syscall.ENOENT): // its step had not begun
		case err != nil:
			first = err
		default:
			// Killed between keeping the old content and the rename, the two
			// names are links to one file, and rename(2) leaves both.
			_ = unix.Unlinkat(bfd, s.Backup, 0)
		}
	case !done && s.NewSHA256 != "":
		// A file the commit made: removed if it is still what it wrote.
		if sum, err := hashAt(dfd, s.Name); err == nil && sum == s.NewSHA256 {
			if err := unix.Unlinkat(dfd, s.Name, 0); err != nil {
				first = err
			}
		}
	}
	if err := d.Sync(); err != nil && first == nil {
		first = err
	}
	return first
}

// hashAt is the sha256 of name in the directory dfd: a regular file's
// bytes, a symbolic link's target.
func hashAt(dfd int, name string) (string, error) {
	var st unix.Stat_t
	if err := unix.Fstatat(dfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return "", err
	}
	if st.Mode&unix.S_IFMT == unix.S_IFLNK {
		buf := make([]byte, max(st.Size+1, 256))
		n, err := unix.Readlinkat(dfd, name, buf)
		if err != nil {
			return "", err
		}
		if int64(n) >= int64(len(buf)) {
			return "", syscall.ENAMETOOLONG // changed while read
		}
		return SHA256(buf[:n]), nil
	}
	fd, err := unix.Openat(dfd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", err
	}
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	return hashOpen(f, name)
}

// Recovered puts what Recover said before an outcome: before its text, or
// its error.
func Recovered(lines []string, o outcome.Outcome) outcome.Outcome {
	if len(lines) == 0 {
		return o
	}
	said := strings.Join(lines, "\n")
	if o.Kind == outcome.Done {
		o.Text = said + "\n" + o.Text
	} else {
		o.Message = said + " " + o.Message
	}
	return o
}
