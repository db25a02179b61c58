// Package patch applies a patch to many files, all of them or none.
//
//	toolkit patch [flags] < x.patch
//	toolkit patch [flags] x.patch
//	apply_patch '*** Begin Patch …'     (the link models trained on Codex type)
//	apply_patch <<'EOF' … EOF
//	echo '{"patch":"*** Begin Patch\n…"}' | toolkit patch
//
// Two formats, told apart by their first line: the "*** Begin Patch"
// envelope (Add File, Update File with Move to, Delete File, @@ anchors,
// End of File) and unified diffs (git diff's, diff -u's; /dev/null for a
// file added or deleted). Each hunk is found with edit's levels
// (internal/match), after the hunk before it, after its @@ anchors, and, of
// several places, at the one nearest the line its header names; a hunk
// whose added lines are there and removed ones gone is already applied,
// not a failure. A hunk that does not apply is an error naming the file, the
// hunk, the line it expected and the nearest one the file has, and nothing
// is written.
//
// All or none: every new content is staged beside its file first, then
// they are renamed in one after another; if one cannot be, those already in
// are put back. The text is a line per file:
//
//	M src/a.py (+3 -1) sha256 1a2b3c4d5e6f
//	A src/new.py (+10) sha256 9f2c01ab34cd
//	D src/old.py
//	R src/x.py -> src/y.py (+1 -1) sha256 3f2a…
package patch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"toolkit/internal/cmdline"
	"toolkit/internal/diag"
	"toolkit/internal/history/track"
	"toolkit/internal/outcome"
	"toolkit/internal/replace"
	"toolkit/internal/root"
	"toolkit/internal/text"
)

// Args is the input of one patch call.
type Args struct {
	Patch   string            `json:"patch" flag:"stdin" check:"required,nonempty" desc:"The patch: a \"*** Begin Patch\" envelope or a unified diff (git diff)."`
	DryRun  bool              `json:"dry_run,omitempty" flag:"--dry-run" usage:"check that the patch applies; write nothing" desc:"Check that every hunk applies and say what would change; write nothing."`
	IfMatch map[string]string `json:"if_match,omitempty" check:"ifmatch" desc:"For files the patch changes: the sha256 (12 or more hex digits) each must have, or \"absent\", by path as the patch names it."`
	diag.Fields

	// Host holds the settings a host chooses, not the model.
	Host Options `json:"-"`
}

// Options are the host's settings for a patch.
type Options struct {
	// Root, when set, confines the paths.
	Root *root.Root
}

// Details are the facts of a patch for --json.
type Details struct {
	Files  []FileResult `json:"files"`
	DryRun bool         `json:"dry_run"`
}

// FileResult says what a patch did to one file.
type FileResult struct {
	Op             string   `json:"op"` // "M", "A", "D", "R" (moved), "C" (copied)
	Path           string   `json:"path"`
	MoveTo         string   `json:"move_to,omitempty"`
	Added          int      `json:"added"`
	Removed        int      `json:"removed"`
	Levels         []string `json:"levels,omitempty"`
	AlreadyApplied []int    `json:"already_applied,omitempty"`
	// Replaced says what an envelope's Add File or Move to replaced:
	// "replaced an existing file of 12 lines".
	Replaced string `json:"replaced,omitempty"`
	SHA256   string `json:"sha256,omitempty"`

	Section int `json:"-"` // the line of the patch where its section starts
}

const usage = "toolkit patch [flags] [PATCH-FILE | PATCH] (or the patch on stdin)"

// Applet is patch's command line and in-process call.
var Applet = cmdline.Applet[Args]{
	Name:        "patch",
	Usage:       "apply a patch (unified diff or *** Begin Patch) to many files, all or none",
	Synopsis:    usage,
	Example:     `{"patch":"*** Begin Patch\n*** Update File: a.txt\n@@\n-old\n+new\n*** End Patch\n"}`,
	Description: Description,
	Details:     Details{},
	Hints:       cmdline.Hints{Destructive: true},
	Aliases:     []string{"apply_patch"},
	Stdin:       rawPatch,
	Person:      fromArgs,
	Settings:    cmdline.JoinSettings(track.Settings, diag.Settings),
	Around:      []cmdline.Around{diag.Around, track.Said},
	Run: func(ctx context.Context, a *Args, h cmdline.Host) outcome.Outcome {
		a.Host = Options{Root: h.Root}
		return Run(ctx, *a)
	},
}

// rawPatch takes stdin that is not a JSON object as the patch itself, as
// apply_patch <<'EOF' gives it.
func rawPatch(data []byte, a *Args) bool {
	if t := bytes.TrimLeft(data, " \t\r\n"); len(t) > 0 && t[0] == '{' {
		return false
	}
	a.Patch = string(data)
	return true
}

// fromArgs takes the patch from the one argument: the patch itself when it
// has more than one line (apply_patch "*** Begin Patch…", as Codex runs
// it), otherwise the name of a file holding it (toolkit patch x.diff).
func fromArgs(c *cli.Context, a *Args) error {
	if c.NArg() != 1 {
		return fmt.Errorf("give the patch, or a file holding it, as the one argument, or the patch on stdin; not %d arguments", c.NArg())
	}
	arg := c.Args().First()
	if strings.Contains(arg, "\n") {
		a.Patch = arg
		return nil
	}
	data, err := os.ReadFile(arg)
	if err != nil {
		return cmdline.ToolError(fmt.Sprintf("cannot read the patch: %s", err))
	}
	a.Patch = string(data)
	return nil
}

// Run applies a patch.
func Run(ctx context.Context, a Args) outcome.Outcome {
	files, err := Parse(a.Patch)
	var unsupported *UnsupportedError
	switch {
	case errors.As(err, &unsupported):
		return outcome.Failure("patch: %s; nothing was written", err)
	case err != nil:
		return outcome.Misuse("patch: %s", err)
	}
	p := &planner{r: a.Host.Root, entries: map[string]*entry{}, ifMatch: a.IfMatch}
	if err := p.vacate(files); err != nil {
		return outcome.Failure("%s; nothing was written", err)
	}
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return outcome.Failure("stopped: %s", context.Cause(ctx))
		}
		if err := p.section(f); err != nil {
			return outcome.Failure("%s; nothing was written", err)
		}
	}
	changes := p.changes()
	if !a.DryRun {
		err := replace.CommitAll(p.r, changes)
		var un *replace.Unsynced
		switch {
		case errors.As(err, &un):
			return outcome.Failure("every file of the patch is %s", un)
		case err != nil:
			return outcome.Failure("%s; nothing was written", err)
		}
	}
	// Each file's sha256 from what is there now, read back, not from what
	// was meant to be written.
	for _, e := range p.order {
		if e.last < 0 || !e.cur.exists || e.cur.link {
			continue
		}
		sum := replace.SHA256(e.cur.content)
		if !a.DryRun {
			if sum, err = replace.HashFile(p.r, e.target); err != nil {
				return outcome.Failure("%s: written, but cannot be read back: %s", e.name, replace.Reason(err))
			}
		}
		p.results[e.last].SHA256 = sum
	}
	var text strings.Builder
	d := Details{DryRun: a.DryRun, Files: []FileResult{}}
	for _, res := range p.results {
		d.Files = append(d.Files, res)
		text.WriteString(line(res) + "\n")
	}
	if a.DryRun {
		text.WriteString("[dry run: the patch applies; nothing was written]\n")
	}
	o := outcome.Success(text.String(), d)
	if !a.DryRun {
		for _, c := range changes {
			o.Wrote = append(o.Wrote, p.wrote(c))
		}
	}
	return o
}

// wrote is what the patch did to one file, for history.
func (p *planner) wrote(c replace.Change) outcome.Wrote {
	path, _ := p.r.HostPath(c.Target)
	path, _ = filepath.Abs(path)
	w := outcome.Wrote{Path: path, After: c.Content, Exists: c.Content != nil}
	if e := p.entries[c.Target]; e != nil && e.orig.exists && !e.orig.link {
		w.Before, w.Existed = e.orig.content, true
	}
	return w
}

// line is a section's line of the text.
func line(f FileResult) string {
	var notes []string
	switch f.Op {
	case "D":
	case "A":
		notes = append(notes, fmt.Sprintf("+%d", f.Added))
	default:
		notes = append(notes, fmt.Sprintf("+%d -%d", f.Added, f.Removed))
	}
	if f.Replaced != "" {
		notes = append(notes, f.Replaced)
	}
	notes = append(notes, f.Levels...)
	for _, h := range f.AlreadyApplied {
		notes = append(notes, fmt.Sprintf("hunk %d already applied", h))
	}
	s := f.Op + " " + f.Path
	if f.MoveTo != "" {
		s += " -> " + f.MoveTo
	}
	if len(notes) > 0 {
		s += " (" + strings.Join(notes, "; ") + ")"
	}
	if f.SHA256 != "" {
		s += " sha256 " + f.SHA256[:12]
	}
	return s
}

// state is a file as the patch goes: as it was, or as the sections so far
// left it.
type state struct {
	exists  bool
	link    bool   // the name is a symbolic link, taken as a name (deleted, moved)
	content []byte // never nil for a file that exists
	like    os.FileInfo
	mode    os.FileMode // a mode git's headers give; 0 to keep like's
}

// entry is one file the patch touches, by its path with no link in it.
type entry struct {
	name    string // as the patch first named it
	target  string
	orig    state
	origSum string
	cur     state
	written bool // a section put content here (an add, or a move or copy to it)
	inPlace bool // a section changed it where it is
	changed []int
	last    int // the result line that ends with its sha256; -1 for none
}

// planner works out every file's new state, section by section, before
// anything is written.
type planner struct {
	r       *root.Root
	entries map[string]*entry
	order   []*entry
	results []FileResult
	ifMatch map[string]string
	vacated map[string]bool // the files a unified diff deletes or moves away
}

// resolve is the path with no link in it: through every link, or, with
// name, through the links of its directories only, so that a link is taken
// as itself.
func resolve(r *root.Root, p string, name bool) (string, error) {
	if !name {
		return r.Resolve(p)
	}
	dir, base := filepath.Split(filepath.Clean(root.Expand(p)))
	if base == "." || base == ".." || base == "/" || base == "" {
		return r.Resolve(p)
	}
	if dir == "" {
		dir = "."
	}
	d, err := r.Resolve(dir)
	if err != nil {
		return "", err
	}
	return filepath.Join(d, base), nil
}

// load is the entry of path, read the first time it is met.
func (p *planner) load(path string, name bool) (*entry, error) {
	target, err := resolve(p.r, path, name)
	if err != nil {
		return nil, fmt.Errorf("%s: %s", path, replace.Reason(err))
	}
	if e := p.entries[target]; e != nil {
		return e, nil
	}
	e := &entry{name: path, target: target, last: -1}
	fi, err := p.r.Lstat(target)
	switch {
	case errors.Is(err, fs.ErrNotExist) && !errors.Is(err, root.ErrOutside):
	case err != nil:
		return nil, fmt.Errorf("%s: %s", path, replace.Reason(err))
	case fi.Mode()&os.ModeSymlink != 0:
		e.orig = state{exists: true, link: true, content: []byte{}, like: fi}
		e.origSum, _ = replace.HashFile(p.r, target) // read's for it: its target's; "" for none
	case fi.IsDir():
		return nil, fmt.Errorf("%s: is a directory", path)
	default:
		b, err := replace.ReadWhole(p.r, target)
		if err != nil {
			return nil, fmt.Errorf("%s: %s", path, replace.Reason(err))
		}
		e.orig = state{exists: true, content: b, like: fi}
		e.origSum = replace.SHA256(b)
	}
	if want, ok := p.ifMatch[path]; ok {
		var now *string
		if e.origSum != "" {
			now = &e.origSum
		}
		if err := replace.IfMatch(want).Check(now); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	e.cur = e.orig
	p.entries[target] = e
	p.order = append(p.order, e)
	return e, nil
}

// vacate notes the files a unified diff deletes or moves away: a rename
// may land on one of them (a swap, a rotation).
func (p *planner) vacate(files []File) error {
	p.vacated = map[string]bool{}
	for _, f := range files {
		if !f.Unified || !(f.Op == Delete || f.Op == Update && f.MoveTo != "") {
			continue
		}
		target, err := resolve(p.r, f.Path, true)
		if err != nil {
			return fmt.Errorf("%s: %s", f.Path, replace.Reason(err))
		}
		p.vacated[target] = true
	}
	return nil
}

// note adds a section's result line, the last for the entries it names.
func (p *planner) note(res FileResult, es ...*entry) {
	p.results = append(p.results, res)
	for _, e := range es {
		e.last = len(p.results) - 1
		e.changed = append(e.changed, res.Section)
	}
}

// section applies one section of the patch to the files' states.
func (p *planner) section(f File) error {
	res := FileResult{Path: f.Path, Section: f.Line}
	mode := os.FileMode(f.Mode & 0o7777)
	switch f.Op {
	case Add:
		return p.add(f, res, mode)
	case Delete:
		e, err := p.load(f.Path, true)
		if err != nil {
			return err
		}
		if !e.cur.exists {
			return fmt.Errorf("%s: no such file; the patch deletes it", f.Path)
		}
		if len(f.Hunks) > 0 && !e.cur.link {
			out, err := onText(e.cur.content, f.Hunks)
			if err != nil {
				return fmt.Errorf("%s: %w", f.Path, err)
			}
			if len(bytes.TrimSpace(out.text)) > 0 {
				return fmt.Errorf("%s: does not hold what the patch deletes", f.Path)
			}
		}
		res.Op = "D"
		e.cur = state{}
		p.note(res, e)
	default:
		if f.MayCreate {
			if e, err := p.load(f.Path, false); err == nil && !e.cur.exists && !e.orig.exists {
				return p.add(f, res, mode)
			}
		}
		return p.update(f, res, mode)
	}
	return nil
}

// add applies an Add: the file's content is the hunk's new side.
func (p *planner) add(f File, res FileResult, mode os.FileMode) error {
	e, err := p.load(f.Path, false)
	if err != nil {
		return err
	}
	if e.cur.exists {
		if f.Unified && !(p.vacated[e.target] && !e.written) {
			return fmt.Errorf("%s: is there already; the patch adds it", f.Path)
		}
		res.Replaced = fmt.Sprintf("replaced an existing file of %s", text.Count(int64(text.LineCount(e.cur.content)), "line"))
	}
	content := []byte(f.Hunks[0].New())
	res.Op, res.Added = "A", countKind(f.Hunks[0].Lines, '+')
	e.cur = state{exists: true, content: content, mode: mode}
	e.written = true
	p.note(res, e)
	return nil
}

// update applies an Update, a move or a copy.
func (p *planner) update(f File, res FileResult, mode os.FileMode) error {
	moves := f.MoveTo != "" && f.Op != Copy
	src, err := p.load(f.Path, moves)
	if err != nil {
		return err
	}
	base := src.cur
	if f.Unified && !src.inPlace && src.orig.exists {
		// git reads a file a rename or copy starts from as it was, unless a
		// section before changed it where it is.
		base = src.orig
	}
	if !base.exists {
		if src.orig.exists {
			return fmt.Errorf("%s: the patch's section at line %d deleted or moved it; the section at line %d changes it", f.Path, src.changed[len(src.changed)-1], f.Line)
		}
		return fmt.Errorf("%s: no such file; the patch changes it", f.Path)
	}
	if base.link {
		// A link moved is read through.
		b, err := replace.ReadWhole(p.r, src.target)
		if err != nil {
			return fmt.Errorf("%s: %s", f.Path, replace.Reason(err))
		}
		fi, _ := p.r.Stat(src.target)
		base = state{exists: true, content: b, like: fi}
	}
	content := base.content
	if len(f.Hunks) > 0 {
		out, err := onText(base.content, f.Hunks)
		if err != nil {
			if len(src.changed) > 0 {
				return fmt.Errorf("%s: %w (after the patch's section at line %d changed it)", f.Path, err, src.changed[len(src.changed)-1])
			}
			return fmt.Errorf("%s: %w", f.Path, err)
		}
		content = out.text
		res.Added, res.Removed = out.added, out.removed
		res.Levels, res.AlreadyApplied = out.levels, out.already
	}
	if mode == 0 {
		mode = base.mode
	}
	next := state{exists: true, content: content, like: base.like, mode: mode}
	res.Op = "M"
	if f.MoveTo == "" {
		src.cur, src.inPlace = next, true
		p.note(res, src)
		return nil
	}
	dst, err := p.load(f.MoveTo, false)
	if err != nil {
		return err
	}
	if dst == src {
		src.cur, src.inPlace = next, true
		p.note(res, src)
		return nil
	}
	if dst.cur.exists {
		if f.Unified && !(p.vacated[dst.target] && !dst.written) {
			return fmt.Errorf("%s: is there already; the patch moves %s to it", f.MoveTo, f.Path)
		}
		if !f.Unified {
			res.Replaced = fmt.Sprintf("replaced an existing file of %s", text.Count(int64(text.LineCount(dst.cur.content)), "line"))
		}
	}
	dst.cur, dst.written = next, true
	res.MoveTo = f.MoveTo
	if f.Op == Copy {
		res.Op = "C"
		p.note(res, dst)
		return nil
	}
	res.Op = "R"
	if !f.Unified || !src.written {
		// In a unified diff, a file another rename put here stays.
		src.cur = state{}
	}
	p.note(res, dst)
	src.changed = append(src.changed, f.Line)
	return nil
}

// onText applies hunks to a file's bytes in its encoding.
func onText(old []byte, hunks []Hunk) (applied, error) {
	enc, err := text.Binary(old[:min(len(old), text.SniffSize)], int64(len(old)))
	if err != nil {
		return applied{}, err
	}
	body := text.Decode(old, enc)
	if enc.Unit != 0 && !bytes.Equal(text.Encode(body, enc), old) {
		return applied{}, fmt.Errorf("%s text that does not decode cleanly", enc.Name)
	}
	res, err := apply(body, hunks)
	res.text = text.Encode(res.text, enc)
	return res, err
}

// changes are the files whose state at the end differs from the start, as
// replace.CommitAll takes them.
func (p *planner) changes() []replace.Change {
	var out []replace.Change
	for _, e := range p.order {
		expect := replace.Expect{Absent: true}
		if e.orig.exists && !e.orig.link {
			expect = replace.Expect{SHA256: e.origSum}
		} else if e.orig.exists {
			expect = replace.Expect{} // a link is removed as it is
		}
		switch {
		case !e.cur.exists && e.orig.exists:
			out = append(out, replace.Change{Path: e.name, Target: e.target, Expect: expect})
		case e.cur.exists && (!e.orig.exists || e.orig.link || e.cur.mode != 0 || e.cur.like != e.orig.like ||
			!bytes.Equal(e.cur.content, e.orig.content)):
			out = append(out, replace.Change{Path: e.name, Target: e.target, Content: e.cur.content,
				Like: replace.Like{File: e.cur.like, Mode: e.cur.mode}, Expect: expect})
		}
	}
	return out
}

// Description tells a model when to use patch and what it returns.
const Description = `Apply a patch to one or more files in the sandbox, all of it or none of it. Use it for changes across several files, or when a patch is what you have: a unified diff (as git diff prints it) or the "*** Begin Patch" format:

*** Begin Patch
*** Update File: src/app.py
@@ def greet():
-    print("Hi")
+    print("Hello")
*** Add File: src/new.py
+print("new")
*** Delete File: src/old.py
*** End Patch

Each hunk's context and removed lines are looked for in the file (after the @@ line's text, if it has some), allowing for wrong line endings, trailing blanks, indentation and look-alike characters, as edit does; a hunk already applied is said so and skipped. If any hunk does not apply, nothing is written, and the error names the file, the hunk, the line it expected and the nearest line the file has.

Returns a line per file: M (changed), A (added), D (deleted) or R (moved), the lines added and removed, and the file's new sha256. dry_run checks and writes nothing.`
