// Package history tells what every call changed under its tree and keeps
// what undo needs to take it back, without git, in bounded disk.
//
// The tree is the host's --root, else the top of the git work tree around
// the call's directory, else that directory; never / or the temporary
// directory itself. It is walked as grep and glob walk it (the same ignore
// rules), hidden names included, .git never, plus the small files the
// ignore files leave out (.env); heavy directories (node_modules, .venv, …)
// are one entry each, their own stat standing for what they hold.
//
// A tree's index keeps each path's stat and content sha256, as git's index
// does, sorted on disk (trees/ID.index). A shell call is scanned before and
// after its command: a path whose stat changed is hashed, and is a change
// only if its content or mode did (git's racy rule makes an entry stamped
// within a tick of its scan hashed again next time). What changed between
// calls is found by the scan before, and said apart. write, edit and patch
// say themselves what they changed, with the bytes before and after: no
// scan. Contents up to the host's cap are kept in a store of whole contents
// by sha256, flate level 1, in append-only packs (store); the calls in an
// append-only log (calls.jsonl). The first scan of a tree captures its
// baseline, in a background toolkit or in the call.
//
// Everything lives in the state directory's history/, which a confined
// command cannot write: a command can neither forge history nor poison a
// pre-image.
package history

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"toolkit/internal/cut"
	"toolkit/internal/history/index"
	"toolkit/internal/history/log"
	"toolkit/internal/history/pack"
	"toolkit/internal/outcome"
	"toolkit/internal/replace"
	"toolkit/internal/root"
	"toolkit/internal/state"
	"toolkit/internal/text"
)

// Mode is what history does for a call: nothing, report its changes, or
// report them and keep what undo needs.
type Mode string

const (
	Off    Mode = "off"
	Report Mode = "report"
	Undo   Mode = "undo"
)

// Settings are the host's bounds of history.
type Settings struct {
	Mode         Mode
	MaxFile      int64 // a file's content is kept up to this
	MaxCallBytes int64 // a call keeps at most this much new content
	MaxCallFiles int   // … and at most this many files
	BigDir       int   // a directory that gains this many files in a call is one entry
	MaxTree      int   // a tree of more files is not tracked
	StoreCap     int64 // the store's cap; 0: min(512 MiB, 10 % of the free space)
	// Keeper keeps a background toolkit for each tree (its keeper), which
	// watches it so that a call walks only what changed, and captures its
	// baseline; without it every call walks the whole tree, and the first
	// captures the baseline before its command runs.
	Keeper bool
	// KeeperIdle ends a keeper no call asked anything of for this long.
	KeeperIdle time.Duration
	// MaxWatches bounds a keeper's inotify watches (0: half of what the
	// system allows the user); a tree of more directories is walked whole.
	MaxWatches int
	// Owner, when set, is the toolkit mcp whose calls started the keeper
	// ("PID START", Owner's): the keeper ends with it, not after
	// KeeperIdle.
	Owner string `json:",omitempty"`
}

// Defaults are the bounds when the host gives none.
var Defaults = Settings{Mode: Undo, MaxFile: 2 << 20, MaxCallBytes: 64 << 20, MaxCallFiles: 20_000, BigDir: 1000, MaxTree: 300_000,
	Keeper: true, KeeperIdle: 10 * time.Minute}

// history is the state directory's history, open for one call.
type history struct {
	dir   string
	s     Settings
	lock  *os.File
	store *pack.Store
}

// open opens history/ in the state directory, and takes its lock.
func open(s Settings) (*history, error) {
	st, err := state.Dir("history")
	if err != nil {
		return nil, err
	}
	h := &history{dir: filepath.Join(st, "history"), s: s}
	for _, sub := range []string{"trees", "open", "packs"} {
		if err := os.MkdirAll(filepath.Join(h.dir, sub), 0o700); err != nil {
			return nil, err
		}
	}
	if h.lock, err = os.OpenFile(filepath.Join(h.dir, "lock"), os.O_RDWR|os.O_CREATE, 0o600); err != nil {
		return nil, err
	}
	if err := lockWithin(h.lock, lockWait); err != nil {
		h.lock.Close()
		return nil, err
	}
	swept.Do(h.sweep)
	if s.Mode == Undo {
		if h.store, err = pack.Open(filepath.Join(h.dir, "packs"), storeCap(h.dir, s.StoreCap)); err != nil {
			h.close()
			return nil, err
		}
		h.store.Live = h.live
	}
	return h, nil
}

// swept: a process sweeps history's temporary files once, at its first
// open (a per-call toolkit at its call's first).
var swept sync.Once

// sweep removes the temporary files a toolkit killed mid-write left: each
// is written under the lock, now held. One read of each directory.
func (h *history) sweep() {
	for _, sub := range []string{"", "trees", "open"} {
		dir := filepath.Join(h.dir, sub)
		names, _ := os.ReadDir(dir)
		for _, e := range names {
			if strings.HasSuffix(e.Name(), ".tmp") {
				os.Remove(filepath.Join(dir, e.Name()))
			}
		}
	}
}

// lockWait bounds the wait for history's lock: a toolkit stopped (SIGSTOP)
// or stuck while it holds it must not hold up every call after it, which
// go on without history, saying so.
var lockWait = 5 * time.Second

// lockWithin takes f's lock, waiting at most wait.
func lockWithin(f *os.File, wait time.Duration) error {
	deadline := time.Now().Add(wait)
	for pause := time.Millisecond; ; pause = min(2*pause, 50*time.Millisecond) {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil || !errors.Is(err, unix.EWOULDBLOCK) {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("another toolkit has held its lock for %s", cut.Seconds(wait))
		}
		time.Sleep(pause)
	}
}

// close makes what was kept durable and lets go of the lock.
func (h *history) close() error {
	var err error
	if h.store != nil {
		err = h.store.Close()
	}
	h.lock.Close() // the lock goes with it
	return err
}

// storeCap is the store's cap: the host's, or min(512 MiB, 10 % of its
// file system's free space), and on a tmpfs (memory) min(64 MiB, 5 %).
func storeCap(dir string, host int64) int64 {
	if host > 0 {
		return host
	}
	var fs unix.Statfs_t
	if unix.Statfs(dir, &fs) != nil {
		return 64 << 20
	}
	free := int64(fs.Bavail) * fs.Bsize
	if fs.Type == unix.TMPFS_MAGIC {
		return min(64<<20, free/20)
	}
	return min(512<<20, free/10)
}

// Tree is the tree a call's history is kept for: the root, else the top
// of the git work tree around dir, else dir. "" and why, where there is
// none to keep: /, /tmp and the temporary directory itself are not trees.
func Tree(dir, rootDir string) (string, string) {
	tree := rootDir
	if tree == "" {
		abs, err := filepath.Abs(dir)
		if err != nil {
			return "", "history is off for this call: " + err.Error()
		}
		tree = abs
		if top, ok := gitTop(abs); ok {
			tree = top
		}
	}
	return kept(tree)
}

// TreeOfFile is the tree of a file a call wrote (write, edit, patch): the
// root, else the tree the calls keep there: of the directories above the
// file whose history is kept (ones a call walked, whose scans see the
// file, a nested git repository's included), the one a call last ended
// on, else the top of the git work tree around the file, else the working
// directory where the file is in it, else the file's directory.
func TreeOfFile(path, rootDir string) (string, string) {
	dir := filepath.Dir(path)
	if rootDir != "" {
		return Tree(dir, rootDir)
	}
	if st, err := state.Dir("history"); err == nil {
		h := &history{dir: filepath.Join(st, "history")} // read only: no lock
		best, bestAt := "", time.Time{}
		for d := dir; ; d = filepath.Dir(d) {
			if _, err := os.Stat(h.indexPath(d)); err == nil {
				if at := h.lastAt(d); best == "" || at.After(bestAt) {
					best, bestAt = d, at
				}
			}
			if filepath.Dir(d) == d {
				break
			}
		}
		if best != "" {
			return kept(best)
		}
	}
	if top, ok := gitTop(dir); ok {
		return kept(top)
	}
	if wd, err := os.Getwd(); err == nil && root.Within(dir, wd) {
		return kept(wd)
	}
	return kept(dir)
}

// gitTop is the top of the git work tree around dir, an absolute path.
func gitTop(dir string) (string, bool) {
	for d := dir; ; d = filepath.Dir(d) {
		if fi, err := os.Lstat(filepath.Join(d, ".git")); err == nil && (fi.IsDir() || fi.Mode().IsRegular()) {
			return d, true
		}
		if filepath.Dir(d) == d {
			return "", false
		}
	}
}

// kept is tree, or "" and why where it is not a tree history keeps.
func kept(tree string) (string, string) {
	if tree == "/" || tree == "/tmp" || tree == filepath.Clean(os.TempDir()) {
		return "", fmt.Sprintf("history is off for this call: %s is not a tree toolkit keeps the history of (/ and the temporary directory never are)", tree)
	}
	return tree, ""
}

// treeID names a tree's files in trees/.
func treeID(tree string) string {
	sum := sha256.Sum256([]byte(tree))
	return hex.EncodeToString(sum[:8])
}

func (h *history) indexPath(tree string) string {
	return filepath.Join(h.dir, "trees", treeID(tree)+".index")
}

// nextCall is a new call number, unique in the state directory: one past
// the last the seq file gives and the last the log has, so that seq is
// written in place and never synced (a number a crash of the machine took
// back from it is still in the log, whose ends are synced).
func (h *history) nextCall() (int64, error) {
	path := filepath.Join(h.dir, "seq")
	b, _ := os.ReadFile(path)
	n, _ := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	n = max(n, log.LastCall(h.dir)) + 1
	if err := replace.WriteLine(path, strconv.FormatInt(n, 10)); err != nil {
		return 0, err
	}
	return n, nil
}

// gitHead is where a tree's HEAD points: its branch and commit.
func gitHead(tree string) string {
	git := filepath.Join(tree, ".git")
	b, err := readGit(filepath.Join(git, "HEAD"))
	if err != nil {
		return ""
	}
	head := strings.TrimSpace(string(b))
	ref, ok := strings.CutPrefix(head, "ref: ")
	if !ok {
		return "detached " + short(head)
	}
	branch := strings.TrimPrefix(ref, "refs/heads/")
	if b, err := readGit(filepath.Join(git, ref)); err == nil {
		return branch + " " + short(strings.TrimSpace(string(b)))
	}
	if b, err := readGit(filepath.Join(git, "packed-refs")); err == nil {
		for line := range strings.Lines(string(b)) {
			if sha, name, ok := strings.Cut(strings.TrimSpace(line), " "); ok && name == ref {
				return branch + " " + short(sha)
			}
		}
	}
	return branch
}

// readGit reads a file of git's: a regular file of at most 64 MiB, never
// waiting on a FIFO or a device a command put in its place.
func readGit(path string) ([]byte, error) {
	b, _, err := replace.ReadUpTo(nil, path, 64<<20)
	if err == nil && b == nil {
		err = errors.New("no such regular file of git's, or a larger one")
	}
	return b, err
}

func short(sha string) string { return sha[:min(len(sha), 7)] }

// moved says a HEAD that moved: "HEAD main 1a2b3c4 → main 4d5e6f7".
func moved(before, after string) string {
	if before == after || before == "" && after == "" {
		return ""
	}
	return "HEAD " + before + " → " + after
}

// isText says whether b is text, by read's rule.
func isText(b []byte) bool {
	_, err := text.Binary(b[:min(len(b), text.SniffSize)], int64(len(b)))
	return err == nil
}

// errOff is a history that is off for a call.
var errOff = errors.New("history is off")

// changed converts a call's file records to what the model is told: a
// directory made or removed whole with the files in it is one entry
// ("D vendor/", files 1501); a path that went from a file to a link or
// back is one, its kind changed ("M l.txt", kind "link → file"); a
// directory whose mode alone changed is one ("M src/", mode "755 → 711").
// The directories on the way to the files a call made or removed are said
// by their files.
func changed(frs []log.File) []outcome.ChangedFile {
	var out []outcome.ChangedFile
	for i := 0; i < len(frs); i++ {
		f := frs[i]
		cf := changedFile(f)
		switch {
		case f.Dir && !f.Heavy && f.Files == 0 && f.Status == "M":
		case f.Dir && !f.Heavy && f.Files == 0:
			// A directory made or removed: whole, with the files under it
			// that came or went with it, one entry; else its files say it.
			n := wholeDir(&cf, frs[i:])
			if n < 0 {
				continue
			}
			i += n
		case f.Status == "D" && i+1 < len(frs) && frs[i+1].Path == f.Path && frs[i+1].Status == "A" && !f.Dir && !frs[i+1].Dir:
			// Gone and come as another kind of thing: one path.
			a := frs[i+1]
			cf.Status, cf.Added, cf.Removed, cf.Bytes = "M", a.Added, nil, a.Bytes
			cf.Kind = kindName(f.PreMode) + " → " + kindName(a.PostMode)
			cf.Restorable = f.Restorable() && a.Restorable()
			if cf.Why == "" {
				cf.Why = a.Why
			}
			i++
		}
		out = append(out, cf)
	}
	return out
}

// changedFile is one record as the model is told it.
func changedFile(f log.File) outcome.ChangedFile {
	path := f.Path
	if f.Dir {
		path += "/"
	}
	cf := outcome.ChangedFile{Path: path, RawPath: log.AsBytes(path), Status: f.Status, Added: f.Added, Removed: f.Removed, Bytes: f.Bytes, Restorable: f.Restorable(), Why: f.Why, Files: f.Files, SaidBy: f.SaidBy}
	if f.PreMode != 0 && f.PostMode != 0 && f.PreMode&0o7777 != f.PostMode&0o7777 && f.PreMode&index.TypeMask == f.PostMode&index.TypeMask {
		cf.Mode = fmt.Sprintf("%o → %o", f.PreMode&0o7777, f.PostMode&0o7777)
	}
	return cf
}

// wholeDir makes cf, a directory made or removed (frs[0]), the one entry
// of the files under it that came or went with it (frs after it): it
// returns how many records it took in, or -1 where the directory is not
// whole in them, or holds fewer than two files (they say it themselves).
func wholeDir(cf *outcome.ChangedFile, frs []log.File) int {
	f := frs[0]
	n, j := 0, 1
	for ; j < len(frs) && strings.HasPrefix(frs[j].Path, f.Path+"/") && frs[j].Status == f.Status; j++ {
		g := frs[j]
		if !g.Dir {
			n++
		}
		cf.Bytes += g.Bytes
		if !g.Restorable() && cf.Restorable {
			cf.Restorable, cf.Why = false, g.Why
		}
	}
	whole := j == len(frs) || !strings.HasPrefix(frs[j].Path, f.Path+"/")
	if !whole || n < 2 {
		return -1
	}
	cf.Files, cf.Added, cf.Removed = n, nil, nil
	return j - 1
}

// kindName names what a st_mode says a path is.
func kindName(mode uint32) string {
	if mode == 0 {
		return "file"
	}
	return kindOf(mode).String()
}
