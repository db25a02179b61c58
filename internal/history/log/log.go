// Package log is history's log of calls (calls.jsonl): each call's
// beginning, and its end with what it changed, a JSON line each, appended
// (a call's end synced) and bounded; and the marks of the calls begun and
// not ended (open/N), which tell a call killed mid-way. It is written with
// encoding/json and read with json v2, by one decoder: Read.
package log

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	jsonv2 "github.com/go-json-experiment/json"
	"golang.org/x/sys/unix"

	"toolkit/internal/proc"
	"toolkit/internal/replace"
)

// Record is a line of calls.jsonl: a call's beginning, or its end with
// what it changed.
type Record struct {
	Call        int64      `json:"call"`
	Tree        string     `json:"tree,omitempty"`
	RawTree     []byte     `json:"raw_tree,omitempty"` // Tree's bytes, where they are not UTF-8 (AsBytes)
	Tool        string     `json:"tool,omitempty"`
	Begin       *time.Time `json:"begin,omitempty"`
	End         *time.Time `json:"end,omitempty"`
	Files       []File     `json:"files,omitempty"`
	Outside     []File     `json:"outside,omitempty"`
	Since       int64      `json:"since,omitempty"`
	Jobs        []string   `json:"jobs,omitempty"` // the jobs that ran in the tree meanwhile, with Outside
	During      []int64    `json:"during,omitempty"`
	Git         string     `json:"git,omitempty"`
	Interrupted bool       `json:"interrupted,omitempty"`
	Undid       []int64    `json:"undid,omitempty"` // an undo's: the calls it took back
	// Said: the call said what it changed (write, edit, patch, undo), no
	// scan found it; a scan of an overlapping call names such a file as
	// said by it.
	Said bool `json:"said,omitempty"`
}

// File is what a call did to one path: its content's sha256 and mode
// before and after ("" where there was none, or it was not known), and
// whether each is kept.
type File struct {
	Path     string `json:"path"`
	RawPath  []byte `json:"raw_path,omitempty"` // Path's bytes, where they are not UTF-8 (AsBytes)
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

// AsBytes is a name (a path's, a tree's) as the log keeps it beside its
// text, where it is not UTF-8: JSON holds UTF-8 only, and would put U+FFFD
// in place of the other bytes, so that an undo would look for another
// name. nil for a UTF-8 name.
func AsBytes(name string) []byte {
	if utf8.ValidString(name) {
		return nil
	}
	return []byte(name)
}

// named is a name the log kept: its bytes, where it kept them.
func Named(text string, raw []byte) string {
	if raw != nil {
		return string(raw)
	}
	return text
}

// withBytes is files with each name that is not UTF-8 kept as bytes too.
func withBytes(files []File) []File {
	if !slices.ContainsFunc(files, func(f File) bool { return !utf8.ValidString(f.Path) }) {
		return files
	}
	files = slices.Clone(files)
	for i := range files {
		files[i].RawPath = AsBytes(files[i].Path)
	}
	return files
}

// FromBytes is files as the log kept them, each name from its bytes where
// it kept them.
func FromBytes(files []File) []File {
	for i := range files {
		files[i].Path, files[i].RawPath = Named(files[i].Path, files[i].RawPath), nil
	}
	return files
}

// Restorable says undo can take the change back: what was there before is
// known and kept (nothing, for a path the call made).
func (f *File) Restorable() bool {
	switch {
	case f.Why != "" || f.Heavy || f.Files > 0 || f.SaidBy != 0:
		return false
	case f.Status == "A":
		return true
	}
	return f.PreKept || f.Dir
}

// Append adds r to the log in dir; the end of a call that says a change
// synced (with every Record before it in the log: a begin is made durable
// by its end's sync, and the end of a call that changed nothing by the
// next end synced: it costs a journal commit, 0.25 ms a call, where a
// crash of the machine would lose no change in between).
func Append(dir string, r Record) error {
	r.RawTree, r.Files, r.Outside = AsBytes(r.Tree), withBytes(r.Files), withBytes(r.Outside)
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(filepath.Join(dir, "calls.jsonl"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := f.Write(append(b, '\n')); err != nil {
		return err
	}
	if r.End != nil && (len(r.Files) > 0 || len(r.Outside) > 0 || len(r.Undid) > 0 || r.Interrupted) {
		if err := unix.Fdatasync(int(f.Fd())); err != nil {
			return err
		}
	}
	if fi, err := f.Stat(); err == nil && fi.Size() > MaxLog {
		_ = compact(dir) // the log stays as it is should this fail
	}
	return nil
}

// MaxLog bounds the log of calls: past it, its oldest calls go, so that
// what is left is at most half of it. (A call that changed 1,000 files
// takes about 140 KB of it; one that changed a few, a few hundred bytes.)
var MaxLog int64 = 8 << 20

// compact rewrites the log with its newest calls only, as many as fit in
// half of MaxLog, and every call not ended yet; their lines stay in their
// order. The calls that go are no longer listed nor undoable; the contents
// they kept stay in the store until its cap pushes them out.
func compact(dir string) error {
	lines, err := Read(dir)
	if err != nil {
		return err
	}
	type call struct {
		size  int64
		ended bool
	}
	byN := map[int64]*call{}
	var order []int64
	for _, l := range lines {
		c := byN[l.Call]
		if c == nil {
			c = &call{}
			byN[l.Call] = c
			order = append(order, l.Call)
		}
		c.size += int64(len(l.line))
		c.ended = c.ended || l.End != nil
	}
	keep := map[int64]bool{}
	var size int64
	full := false
	for _, n := range slices.Backward(order) {
		c := byN[n]
		full = full || size+c.size > MaxLog/2
		if !full || !c.ended {
			keep[n] = true
			size += c.size
		}
	}
	out := make([]byte, 0, size)
	for _, l := range lines {
		if keep[l.Call] {
			out = append(out, l.line...)
		}
	}
	return replace.WriteFile(filepath.Join(dir, "calls.jsonl"), out, true)
}

// Line is a line of the log as read: whether it lists files, its lists
// left in the line, decoded only when a query asks for them
// (callState.files), so that a log of many large calls is not decoded, nor
// copied, whole for the one call an undo or a page of history is about.
type Line struct {
	Record
	HasFiles   nonEmpty `json:"files,omitempty"`
	HasOutside nonEmpty `json:"outside,omitempty"`
	line       []byte
}

// Lists decodes the line's lists: the files the call changed, and those
// changed outside calls before it, each name from its bytes where they
// were kept.
func (l *Line) Lists() (files, outside []File) {
	var v struct {
		Files   []File `json:"files"`
		Outside []File `json:"outside"`
	}
	_ = jsonv2.Unmarshal(l.line, &v)
	return FromBytes(v.Files), FromBytes(v.Outside)
}

// nonEmpty is whether a list in a log line holds anything: "[]" and null
// do not.
type nonEmpty bool

func (l *nonEmpty) UnmarshalJSON(b []byte) error {
	*l = len(b) > 0 && b[0] == '[' && len(bytes.TrimSpace(b[1:])) > 1
	return nil
}

// Read reads the log in dir; a torn last line (toolkit killed mid-append) is
// left out.
func Read(dir string) ([]Line, error) {
	b, err := os.ReadFile(filepath.Join(dir, "calls.jsonl"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Line
	for line := range bytes.Lines(b) {
		var r Line
		if bytes.HasSuffix(line, []byte("\n")) && jsonv2.Unmarshal(line, &r) == nil {
			r.line = line
			out = append(out, r)
		}
	}
	return out, nil
}

// OpenCall is a call begun and not ended, as open/N says it (or a write in
// flight, as open/said-* does).
type OpenCall struct {
	Tree    string `json:"tree"`
	RawTree []byte `json:"raw_tree,omitempty"` // Tree's bytes, where they are not UTF-8 (AsBytes)
	Pid     int    `json:"pid"`
	Started uint64 `json:"started"` // the process's start, in ticks: a pid reused is not it
}

// MarkOpen marks call n open, by this process: what tells a call killed
// mid-way, which a crash of the machine would end too, so it is not
// synced.
func MarkOpen(dir string, n int64, tree string) error {
	self, _ := proc.Lookup(os.Getpid())
	b, _ := json.Marshal(OpenCall{Tree: tree, RawTree: AsBytes(tree), Pid: os.Getpid(), Started: self.Start})
	return replace.WriteFile(filepath.Join(dir, "open", strconv.FormatInt(n, 10)), b, false)
}

// OpenCalls are the calls on tree begun and not ended: those whose process
// is alive (running), and those whose process died (interrupted).
func OpenCalls(dir, tree string) (running, interrupted []int64) {
	names, _ := os.ReadDir(filepath.Join(dir, "open"))
	for _, e := range names {
		n, err := strconv.ParseInt(e.Name(), 10, 64)
		if err != nil {
			continue
		}
		var oc OpenCall
		b, err := os.ReadFile(filepath.Join(dir, "open", e.Name()))
		if err != nil || jsonv2.Unmarshal(b, &oc) != nil || Named(oc.Tree, oc.RawTree) != tree {
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

// Closed removes call n's open mark.
func Closed(dir string, n int64) { os.Remove(filepath.Join(dir, "open", strconv.FormatInt(n, 10))) }

// LastCall is the number of the last call the log in dir has a whole line
// of (0 for none), read from its end: the line's first field, as Append
// writes it. A line longer than the end read is read whole.
func LastCall(dir string) int64 {
	f, err := os.Open(filepath.Join(dir, "calls.jsonl"))
	if err != nil {
		return 0
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 0
	}
	for tail := int64(16 << 10); ; tail *= 4 {
		from := max(0, fi.Size()-tail)
		b := make([]byte, fi.Size()-from)
		if _, err := f.ReadAt(b, from); err != nil && !errors.Is(err, io.EOF) {
			return 0
		}
		// The whole lines: from after the first line end (unless the
		// read starts the file) to the last.
		if from > 0 {
			i := bytes.IndexByte(b, '\n')
			if i < 0 {
				continue // no line begins here: read more
			}
			b = b[i+1:]
		}
		b = b[:bytes.LastIndexByte(b, '\n')+1]
		for len(b) > 0 {
			b = b[:len(b)-1] // its line end
			line := b[bytes.LastIndexByte(b, '\n')+1:]
			if n, ok := callOf(line); ok {
				return n
			}
			b = b[:len(b)-len(line)]
		}
		if from == 0 {
			return 0
		}
	}
}

// callOf is the call a log line is of: its first field, `{"call":N`.
func callOf(line []byte) (int64, bool) {
	rest, ok := bytes.CutPrefix(line, []byte(`{"call":`))
	if !ok {
		return 0, false
	}
	end := 0
	for end < len(rest) && rest[end] >= '0' && rest[end] <= '9' {
		end++
	}
	n, err := strconv.ParseInt(string(rest[:end]), 10, 64)
	return n, err == nil && end < len(rest) && (rest[end] == ',' || rest[end] == '}')
}
