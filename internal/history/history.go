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
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"toolkit/internal/history/index"
	"toolkit/internal/history/pack"
	"unicode/utf8"

	jsonv2 "github.com/go-json-experiment/json"

	"golang.org/x/sys/unix"

	"toolkit/internal/cut"
	"toolkit/internal/outcome"
	"toolkit/internal/proc"
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

// Owner is this process as an owner of keepers: "PID START".
func Owner() string {
	self, _ := proc.Lookup(os.Getpid())
	return fmt.Sprintf("%d %d", os.Getpid(), self.Start)
}

// ownerGone says the owner ("PID START") no longer runs.
func ownerGone(owner string) bool {
	var pid int
	var start uint64
	if _, err := fmt.Sscanf(owner, "%d %d", &pid, &start); err != nil {
		return false
	}
	return !proc.StillAlive(pid, start)
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
	// A temporary file here is one a toolkit killed mid-write left: every
	// one is written under the lock, now held.
	for _, pattern := range []string{"*.tmp", "trees/*.tmp", "trees/.index-*.tmp", "open/*.tmp"} {
		stray, _ := filepath.Glob(filepath.Join(h.dir, pattern))
		for _, p := range stray {
			os.Remove(p)
		}
	}
	if s.Mode == Undo {
		if h.store, err = pack.Open(filepath.Join(h.dir, "packs"), storeCap(h.dir, s.StoreCap)); err != nil {
			h.close()
			return nil, err
		}
		h.store.Live = h.live
	}
	return h, nil
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

// nextCall is a new call number, unique in the state directory.
func (h *history) nextCall() (int64, error) {
	path := filepath.Join(h.dir, "seq")
	b, _ := os.ReadFile(path)
	n, _ := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	n++
	if err := writeSynced(path, []byte(strconv.FormatInt(n, 10)+"\n")); err != nil {
		return 0, err
	}
	return n, nil
}

// writeSynced writes a small file whole: a temporary file, synced, renamed.
func writeSynced(path string, b []byte) error { return index.WriteFile(path, b, true) }

// record is a line of calls.jsonl: a call's beginning, or its end with
// what it changed.
type record struct {
	Call        int64        `json:"call"`
	Tree        string       `json:"tree,omitempty"`
	RawTree     []byte       `json:"raw_tree,omitempty"` // Tree's bytes, where they are not UTF-8 (asBytes)
	Tool        string       `json:"tool,omitempty"`
	Begin       *time.Time   `json:"begin,omitempty"`
	End         *time.Time   `json:"end,omitempty"`
	Files       []fileRecord `json:"files,omitempty"`
	Outside     []fileRecord `json:"outside,omitempty"`
	Since       int64        `json:"since,omitempty"`
	Jobs        []string     `json:"jobs,omitempty"` // the jobs that ran in the tree meanwhile, with Outside
	During      []int64      `json:"during,omitempty"`
	Git         string       `json:"git,omitempty"`
	Interrupted bool         `json:"interrupted,omitempty"`
	Undid       []int64      `json:"undid,omitempty"` // an undo's: the calls it took back
	// Said: the call said what it changed (write, edit, patch, undo), no
	// scan found it; a scan of an overlapping call names such a file as
	// said by it.
	Said bool `json:"said,omitempty"`
}

// fileRecord is what a call did to one path: its content's sha256 and mode
// before and after ("" where there was none, or it was not known), and
// whether each is kept.
type fileRecord struct {
	Path     string `json:"path"`
	RawPath  []byte `json:"raw_path,omitempty"` // Path's bytes, where they are not UTF-8 (asBytes)
	Status   string `json:"status"`             // A, M, D
	Dir      bool   `json:"dir,omitempty"`
	Heavy    bool   `json:"heavy,omitempty"`
	Pre      string `json:"pre,omitempty"`
	PreMode  uint32 `json:"pre_mode,omitempty"`
	PreKept  bool   `json:"pre_kept,omitempty"`
	Post     string `json:"post,omitempty"`
	PostMode uint32 `json:"post_mode,omitempty"`
	PostKept bool   `json:"post_kept,omitempty"`
	Added    *int   `json:"added,omitempty"`
	Removed  *int   `json:"removed,omitempty"`
	Bytes    int64  `json:"bytes,omitempty"`
	Files    int    `json:"files,omitempty"` // a big directory's files
	Why      string `json:"why,omitempty"`   // why the change cannot be taken back
	// SaidBy is the write, edit or patch that said this change while the
	// call ran: its change, named here too; this call's undo leaves it.
	SaidBy int64 `json:"said_by,omitempty"`
}

// asBytes is a name (a path's, a tree's) as the log keeps it beside its
// text, where it is not UTF-8: JSON holds UTF-8 only, and would put U+FFFD
// in place of the other bytes, so that an undo would look for another
// name. nil for a UTF-8 name.
func asBytes(name string) []byte {
	if utf8.ValidString(name) {
		return nil
	}
	return []byte(name)
}

// named is a name the log kept: its bytes, where it kept them.
func named(text string, raw []byte) string {
	if raw != nil {
		return string(raw)
	}
	return text
}

// withBytes is files with each name that is not UTF-8 kept as bytes too.
func withBytes(files []fileRecord) []fileRecord {
	if !slices.ContainsFunc(files, func(f fileRecord) bool { return !utf8.ValidString(f.Path) }) {
		return files
	}
	files = slices.Clone(files)
	for i := range files {
		files[i].RawPath = asBytes(files[i].Path)
	}
	return files
}

// fromBytes is files as the log kept them, each name from its bytes where
// it kept them.
func fromBytes(files []fileRecord) []fileRecord {
	for i := range files {
		files[i].Path, files[i].RawPath = named(files[i].Path, files[i].RawPath), nil
	}
	return files
}

// restorable says undo can take the change back: what was there before is
// known and kept (nothing, for a path the call made).
func (f *fileRecord) restorable() bool {
	switch {
	case f.Why != "" || f.Heavy || f.Files > 0 || f.SaidBy != 0:
		return false
	case f.Status == "A":
		return true
	}
	return f.PreKept || f.Dir
}

// appendRecord adds r to the log; a call's end synced (with every record
// before it in the log: a begin is made durable by its end's sync).
func (h *history) appendRecord(r record) error {
	r.RawTree, r.Files, r.Outside = asBytes(r.Tree), withBytes(r.Files), withBytes(r.Outside)
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(filepath.Join(h.dir, "calls.jsonl"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := f.Write(append(b, '\n')); err != nil {
		return err
	}
	if r.End != nil {
		if err := unix.Fdatasync(int(f.Fd())); err != nil {
			return err
		}
	}
	if fi, err := f.Stat(); err == nil && fi.Size() > maxLog {
		_ = h.compact() // the log stays as it is should this fail
	}
	return nil
}

// maxLog bounds the log of calls: past it, its oldest calls go, so that
// what is left is at most half of it. (A call that changed 1,000 files
// takes about 140 KB of it; one that changed a few, a few hundred bytes.)
var maxLog int64 = 8 << 20

// compact rewrites the log with its newest calls only, as many as fit in
// half of maxLog, and every call not ended yet; their lines stay in their
// order. The calls that go are no longer listed nor undoable; the contents
// they kept stay in the store until its cap pushes them out.
func (h *history) compact() error {
	path := filepath.Join(h.dir, "calls.jsonl")
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	type call struct {
		size  int64
		ended bool
	}
	byN := map[int64]*call{}
	var order []int64
	var lines []string
	var nums []int64
	for line := range strings.Lines(string(b)) {
		var r struct {
			Call int64      `json:"call"`
			End  *time.Time `json:"end"`
		}
		if !strings.HasSuffix(line, "\n") || json.Unmarshal([]byte(line), &r) != nil {
			continue
		}
		c := byN[r.Call]
		if c == nil {
			c = &call{}
			byN[r.Call] = c
			order = append(order, r.Call)
		}
		c.size += int64(len(line))
		c.ended = c.ended || r.End != nil
		lines, nums = append(lines, line), append(nums, r.Call)
	}
	keep := map[int64]bool{}
	var size int64
	full := false
	for _, n := range slices.Backward(order) {
		c := byN[n]
		full = full || size+c.size > maxLog/2
		if !full || !c.ended {
			keep[n] = true
			size += c.size
		}
	}
	var out strings.Builder
	out.Grow(int(size))
	for i, line := range lines {
		if keep[nums[i]] {
			out.WriteString(line)
		}
	}
	return writeSynced(path, []byte(out.String()))
}

// logLine is a line of the log as read: whether it lists files, its lists
// left in the line, decoded only when a query asks for them
// (callState.files), so that a log of many large calls is not decoded, nor
// copied, whole for the one call an undo or a page of history is about.
type logLine struct {
	record
	Files   nonEmpty `json:"files,omitempty"`
	Outside nonEmpty `json:"outside,omitempty"`
	line    []byte
}

// nonEmpty is whether a list in a log line holds anything: "[]" and null
// do not.
type nonEmpty bool

func (l *nonEmpty) UnmarshalJSON(b []byte) error {
	*l = len(b) > 0 && b[0] == '[' && len(bytes.TrimSpace(b[1:])) > 1
	return nil
}

// records reads the log; a torn last line (toolkit killed mid-append) is
// left out.
func (h *history) records() ([]logLine, error) {
	b, err := os.ReadFile(filepath.Join(h.dir, "calls.jsonl"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []logLine
	for line := range bytes.Lines(b) {
		var r logLine
		if bytes.HasSuffix(line, []byte("\n")) && jsonv2.Unmarshal(line, &r) == nil {
			r.line = line
			out = append(out, r)
		}
	}
	return out, nil
}

// openCall is a call begun and not ended, as open/N says it.
type openCall struct {
	Tree    string `json:"tree"`
	RawTree []byte `json:"raw_tree,omitempty"` // Tree's bytes, where they are not UTF-8 (asBytes)
	Pid     int    `json:"pid"`
	Started uint64 `json:"started"` // the process's start, in ticks: a pid reused is not it
}

// opened marks call n open, by this process: what tells a call killed
// mid-way, which a crash of the machine would end too, so it is not
// synced.
func (h *history) opened(n int64, tree string) error {
	self, _ := proc.Lookup(os.Getpid())
	b, _ := json.Marshal(openCall{Tree: tree, RawTree: asBytes(tree), Pid: os.Getpid(), Started: self.Start})
	return index.WriteFile(filepath.Join(h.dir, "open", strconv.FormatInt(n, 10)), b, false)
}

// openCalls are the calls on tree begun and not ended: those whose process
// is alive (running), and those whose process died (interrupted).
func (h *history) openCalls(tree string) (running, interrupted []int64) {
	names, _ := os.ReadDir(filepath.Join(h.dir, "open"))
	for _, e := range names {
		n, err := strconv.ParseInt(e.Name(), 10, 64)
		if err != nil {
			continue
		}
		var oc openCall
		b, err := os.ReadFile(filepath.Join(h.dir, "open", e.Name()))
		if err != nil || json.Unmarshal(b, &oc) != nil || named(oc.Tree, oc.RawTree) != tree {
			continue
		}
		if proc.StillAlive(oc.Pid, oc.Started) {
			running = append(running, n)
		} else {
			interrupted = append(interrupted, n)
		}
	}
	slices.Sort(running)
	slices.Sort(interrupted)
	return running, interrupted
}

func (h *history) closed(n int64) { os.Remove(filepath.Join(h.dir, "open", strconv.FormatInt(n, 10))) }

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
func changed(frs []fileRecord) []outcome.ChangedFile {
	var out []outcome.ChangedFile
	for i := 0; i < len(frs); i++ {
		f := frs[i]
		path := f.Path
		if f.Dir {
			path += "/"
		}
		cf := outcome.ChangedFile{Path: path, RawPath: asBytes(path), Status: f.Status, Added: f.Added, Removed: f.Removed, Bytes: f.Bytes, Restorable: f.restorable(), Why: f.Why, Files: f.Files, SaidBy: f.SaidBy}
		if f.PreMode != 0 && f.PostMode != 0 && f.PreMode&0o7777 != f.PostMode&0o7777 && f.PreMode&index.TypeMask == f.PostMode&index.TypeMask {
			cf.Mode = fmt.Sprintf("%o → %o", f.PreMode&0o7777, f.PostMode&0o7777)
		}
		switch {
		case f.Dir && !f.Heavy && f.Files == 0 && f.Status == "M":
		case f.Dir && !f.Heavy && f.Files == 0:
			// A directory made or removed: whole, with the files under it
			// that came or went with it, one entry; else its files say it.
			n, j := 0, i+1
			for ; j < len(frs) && strings.HasPrefix(frs[j].Path, f.Path+"/") && frs[j].Status == f.Status; j++ {
				g := frs[j]
				if !g.Dir {
					n++
				}
				cf.Bytes += g.Bytes
				if !g.restorable() && cf.Restorable {
					cf.Restorable, cf.Why = false, g.Why
				}
			}
			whole := j == len(frs) || !strings.HasPrefix(frs[j].Path, f.Path+"/")
			if !whole || n < 2 {
				continue
			}
			cf.Files, cf.Added, cf.Removed = n, nil, nil
			i = j - 1
		case f.Status == "D" && i+1 < len(frs) && frs[i+1].Path == f.Path && frs[i+1].Status == "A" && !f.Dir && !frs[i+1].Dir:
			// Gone and come as another kind of thing: one path.
			a := frs[i+1]
			cf.Status, cf.Added, cf.Removed, cf.Bytes = "M", a.Added, nil, a.Bytes
			cf.Kind = kindName(f.PreMode) + " → " + kindName(a.PostMode)
			cf.Restorable = f.restorable() && a.restorable()
			if cf.Why == "" {
				cf.Why = a.Why
			}
			i++
		}
		out = append(out, cf)
	}
	return out
}

// kindName names what a st_mode says a path is.
func kindName(mode uint32) string {
	if mode == 0 {
		return "file"
	}
	return kindOf(mode).String()
}
