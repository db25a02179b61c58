package replace

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"

	"toolkit/internal/root"
)

// TestHookRename, when set by a test, runs before each file CommitAll puts
// in place, with the path it goes to (the kill tests kill there).
var TestHookRename func(path string)

// maxStaging is how many files CommitAll stages at once.
const maxStaging = 16

// Change is what CommitAll does to one file: put a new content in its
// place, or remove it; or to a directory: remove it once every file is in
// place, if it is empty then (undo's, for the directories a call made).
// What a change replaces or removes may be a symbolic link, taken away,
// never followed, when Expect names it (its sha256 is its target's).
type Change struct {
	Path      string // as the caller named it, for messages
	Target    string // the path inside the root, with no link in it
	Content   []byte // nil: remove the file
	Link      bool   // Content is a symbolic link's target, put in as a link (undo's)
	Like      Like
	Expect    Expect
	RemoveDir bool // remove the directory Target if it is empty, after the files
}

// CommitAll changes many files, all of them or none: it stages every new
// content beside its file, journals the plan (Journal: should toolkit be
// killed in the middle, the next call's Recover puts every file back),
// then puts them in place one after another, putting back those already in
// if one fails, and syncs their directories once at the end.
func CommitAll(r *root.Root, changes []Change) error {
	// Each directory made and opened once, for all its files.
	dirs := map[string]*os.File{}
	defer func() {
		for _, d := range dirs {
			d.Close()
		}
	}()
	for _, c := range changes {
		at := filepath.Dir(c.Target)
		if c.RemoveDir || dirs[at] != nil {
			continue
		}
		var d *os.File
		var err error
		if c.Content == nil {
			// A file removed: its directory is there, or the change fails.
			d, err = r.OpenFile(at, os.O_RDONLY|syscall.O_DIRECTORY, 0)
		} else {
			d, err = OpenDir(r, at)
		}
		if err != nil {
			return errors.New(CannotWrite(c.Path, err))
		}
		dirs[at] = d
	}
	staged := make([]*Staged, len(changes))
	errs := make([]error, len(changes))
	// Staged side by side: each staging ends in an fsync, and the file
	// system takes the syncs of many together as quickly as one.
	var wg sync.WaitGroup
	sem := make(chan struct{}, maxStaging)
	for i, c := range changes {
		if c.Content == nil || c.RemoveDir {
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			if c.Link {
				staged[i], errs[i] = StageLink(r, c.Target, string(c.Content), dirs[filepath.Dir(c.Target)])
				return
			}
			staged[i], errs[i] = stage(r, c.Target, c.Like, c.Expect.SHA256 != "", dirs[filepath.Dir(c.Target)], func(w io.Writer) error {
				_, err := w.Write(c.Content)
				return err
			})
		}()
	}
	wg.Wait()
	abort := func(from int) {
		for _, s := range staged[from:] {
			if s != nil {
				s.Abort()
			}
		}
	}
	for i, err := range errs {
		if err != nil {
			abort(0)
			return errors.New(CannotWrite(changes[i].Path, err))
		}
	}
	// The journal names every file and the names their old and new
	// contents have on the way, before the first rename: should toolkit be
	// killed in the middle, the next call puts them back (Recover).
	steps := make([]JournalStep, len(changes))
	backups := make([]string, len(changes))
	for i, c := range changes {
		var err error
		switch {
		case c.RemoveDir:
			steps[i], err = stepFor(r, c.Target)
			steps[i].RemoveDir = true
		case staged[i] != nil:
			steps[i], err = staged[i].Plan(r, c.Expect, c.Content)
		default:
			steps[i], err = PlanRemove(r, c.Target)
			backups[i] = steps[i].Backup
		}
		if err != nil {
			abort(0)
			return errors.New(CannotWrite(c.Path, err))
		}
	}
	journal, err := BeginJournal(steps)
	if err != nil {
		abort(0)
		return fmt.Errorf("cannot keep the journal: %s", Reason(err))
	}
	defer journal.Close()
	// Links are made once the journal names them: should toolkit be
	// killed now, Recover removes them.
	for i, s := range staged {
		if s == nil || s.linkDest == "" {
			continue
		}
		if err := s.PlaceLink(); err != nil {
			abort(0)
			return errors.New(CannotWrite(changes[i].Path, err))
		}
	}
	var undos []*Undo
	for i, c := range changes {
		if c.RemoveDir {
			continue
		}
		if TestHookRename != nil {
			TestHookRename(c.Target)
		}
		var u *Undo
		var err error
		if staged[i] != nil {
			u, err = staged[i].CommitUndo(c.Expect)
			staged[i] = nil
		} else {
			u, err = removeUndo(r, dirs[filepath.Dir(c.Target)], c.Target, c.Expect, backups[i])
		}
		if err == nil {
			undos = append(undos, u)
			continue
		}
		for _, undo := range slices.Backward(undos) {
			_ = undo.Revert()
		}
		abort(i + 1)
		if changed, ok := errors.AsType[*Changed](err); ok {
			return fmt.Errorf("%s: %s", c.Path, changed)
		}
		return errors.New(CannotWrite(c.Path, err))
	}
	if err := journal.MarkDone(); err != nil {
		for _, undo := range slices.Backward(undos) {
			_ = undo.Revert()
		}
		return fmt.Errorf("cannot keep the journal: %s", Reason(err))
	}
	// Done, whatever comes: should toolkit be killed now, Recover lets the
	// old contents go and removes the directories that are left.
	err = Done(undos)
	for _, c := range changes {
		if c.RemoveDir {
			_ = r.Remove(c.Target) // only an empty one goes
		}
	}
	return err
}
