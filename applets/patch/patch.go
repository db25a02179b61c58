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
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"sync"

	"github.com/urfave/cli/v2"

	"toolkit/internal/cmdline"
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
	Op             string   `json:"op"` // "M", "A", "D", "R"
	Path           string   `json:"path"`
	MoveTo         string   `json:"move_to,omitempty"`
	Added          int      `json:"added"`
	Removed        int      `json:"removed"`
	Levels         []string `json:"levels,omitempty"`
	AlreadyApplied []int    `json:"already_applied,omitempty"`
	SHA256         string   `json:"sha256,omitempty"`
}

const usage = "toolkit patch [flags] [PATCH-FILE | PATCH] (or the patch on stdin)"

// Applet is patch's command line and in-process call.
var Applet = cmdline.Applet[Args]{
	Name:     "patch",
	Usage:    "apply a patch (unified diff or *** Begin Patch) to many files, all or none",
	Synopsis: usage,
	Example:  `{"patch":"*** Begin Patch\n*** Update File: a.txt\n@@\n-old\n+new\n*** End Patch\n"}`,
	Stdin:    rawPatch,
	Person:   fromArgs,
	Run: func(ctx context.Context, a *Args, h cmdline.Host) outcome.Outcome {
		a.Host = Options{Root: h.Root}
		o := Run(ctx, *a)
		if o.Kind == outcome.UsageError {
			o.Usage = usage
		}
		return o
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

// change is one file's new state, worked out before anything is written.
type change struct {
	res     FileResult
	target  string // with no link in it
	newPath string // R: the target it moves to
	content []byte // the new bytes; nil for a delete
	expect  replace.Expect
	removes bool // the old path goes (D, R)
}

// Run applies a patch.
func Run(ctx context.Context, a Args) outcome.Outcome {
	files, err := Parse(a.Patch)
	if err != nil {
		return outcome.Misuse("patch: %s", err)
	}
	r := a.Host.Root
	var changes []*change
	seen := map[string]*change{} // by target: a file patched twice takes the second on the first
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return outcome.Failure("stopped: %s", context.Cause(ctx))
		}
		c, err := plan(r, f, seen, a.IfMatch)
		if err != nil {
			return outcome.Failure("%s; nothing was written", err)
		}
		if seen[c.target] == nil {
			changes = append(changes, c)
		}
		seen[c.target] = c
	}
	if !a.DryRun {
		err := commit(r, changes)
		var un *replace.Unsynced
		switch {
		case errors.As(err, &un):
			return outcome.Failure("every file of the patch is %s", un)
		case err != nil:
			return outcome.Failure("%s; nothing was written", err)
		}
	}
	var text strings.Builder
	d := Details{DryRun: a.DryRun, Files: []FileResult{}}
	for _, c := range changes {
		d.Files = append(d.Files, c.res)
		text.WriteString(line(c.res) + "\n")
	}
	if a.DryRun {
		text.WriteString("[dry run: the patch applies; nothing was written]\n")
	}
	return outcome.Success(text.String(), d)
}

// line is a file's line of the text.
func line(f FileResult) string {
	var notes []string
	if f.Op != "D" {
		counts := fmt.Sprintf("+%d -%d", f.Added, f.Removed)
		if f.Op == "A" {
			counts = fmt.Sprintf("+%d", f.Added)
		}
		notes = append(notes, counts)
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

// plan works out one file's new content.
func plan(r *root.Root, f File, seen map[string]*change, ifMatch map[string]string) (*change, error) {
	target, err := r.Resolve(f.Path)
	if err != nil {
		return nil, fmt.Errorf("%s: %s", f.Path, replace.Reason(err))
	}
	c := &change{target: target, res: FileResult{Path: f.Path}}
	var old []byte
	exists := false
	if prev := seen[target]; prev != nil {
		old, exists, c.expect = prev.content, prev.content != nil, prev.expect
		c.res = prev.res
	} else {
		old, exists, err = readFile(r, target)
		if err != nil {
			return nil, fmt.Errorf("%s: %s", f.Path, replace.Reason(err))
		}
		if exists {
			sum := sha256.Sum256(old)
			c.expect = replace.Expect{SHA256: hex.EncodeToString(sum[:])}
		} else {
			c.expect = replace.Expect{Absent: true}
		}
		if want, ok := ifMatch[f.Path]; ok {
			if err := matches(f.Path, want, exists, c.expect.SHA256); err != nil {
				return nil, err
			}
		}
	}
	switch f.Op {
	case Add:
		if exists {
			return nil, fmt.Errorf("%s: is there already; the patch adds it", f.Path)
		}
		c.res.Op, c.res.Added = "A", count(f.Hunks[0], '+')
		c.content = []byte(f.Hunks[0].New())
	case Delete:
		if !exists {
			return nil, fmt.Errorf("%s: no such file; the patch deletes it", f.Path)
		}
		if len(f.Hunks) > 0 {
			res, err := onText(old, f.Hunks)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", f.Path, err)
			}
			if len(bytes.TrimSpace(res.text)) > 0 {
				return nil, fmt.Errorf("%s: does not hold what the patch deletes", f.Path)
			}
		}
		c.res.Op, c.removes, c.content = "D", true, nil
	default:
		if !exists {
			return nil, fmt.Errorf("%s: no such file; the patch updates it", f.Path)
		}
		res, err := onText(old, f.Hunks)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.Path, err)
		}
		c.res.Op, c.content = "M", res.text
		c.res.Added += res.added
		c.res.Removed += res.removed
		c.res.Levels = append(c.res.Levels, res.levels...)
		c.res.AlreadyApplied = append(c.res.AlreadyApplied, res.already...)
		if f.MoveTo != "" {
			to, err := r.Resolve(f.MoveTo)
			if err != nil {
				return nil, fmt.Errorf("%s: %s", f.MoveTo, replace.Reason(err))
			}
			if to != target {
				if _, there, _ := readFile(r, to); there {
					return nil, fmt.Errorf("%s: is there already; the patch moves %s to it", f.MoveTo, f.Path)
				}
				c.res.Op, c.res.MoveTo, c.newPath, c.removes = "R", f.MoveTo, to, true
			}
		}
	}
	if c.content != nil {
		sum := sha256.Sum256(c.content)
		c.res.SHA256 = hex.EncodeToString(sum[:])
	}
	return c, nil
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

func matches(path, want string, exists bool, sum string) error {
	switch {
	case want == "absent" && exists:
		return fmt.Errorf("%s: changed since it was read (it exists now, sha256 %s)", path, sum[:12])
	case want != "absent" && !exists:
		return fmt.Errorf("%s: changed since it was read (it no longer exists)", path)
	case want != "absent" && !strings.HasPrefix(sum, strings.ToLower(want)):
		return fmt.Errorf("%s: changed since it was read (sha256 now %s)", path, sum[:12])
	}
	return nil
}

// readFile reads a file whole; exists false when there is none.
func readFile(r *root.Root, path string) ([]byte, bool, error) {
	b, err := replace.ReadWhole(r, path)
	if errors.Is(err, fs.ErrNotExist) && !errors.Is(err, root.ErrOutside) {
		return nil, false, nil
	}
	return b, err == nil, err
}

// testHookRename, when set by a test, runs before each file is put in
// place, with the path it goes to.
var testHookRename func(path string)

// maxStaging is how many files commit stages at once.
const maxStaging = 16

// commit stages every new content, then puts them in place one after
// another, putting back those already in if one fails.
func commit(r *root.Root, changes []*change) error {
	type step struct {
		c      *change
		staged *replace.Staged
		at     string // where the content goes
	}
	steps := make([]step, len(changes))
	errs := make([]error, len(changes))
	// Staged side by side: each staging ends in an fsync, and the file
	// system takes the syncs of many together as quickly as one.
	var wg sync.WaitGroup
	sem := make(chan struct{}, maxStaging)
	for i, c := range changes {
		steps[i] = step{c: c, at: c.target}
		if c.newPath != "" {
			steps[i].at = c.newPath
		}
		if c.content == nil {
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			steps[i].staged, errs[i] = replace.Stage(r, steps[i].at, func(w io.Writer) error {
				_, err := w.Write(c.content)
				return err
			})
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			for _, s := range steps {
				if s.staged != nil {
					s.staged.Abort()
				}
			}
			return fmt.Errorf("%s: cannot write: %s", changes[i].res.Path, replace.Reason(err))
		}
	}
	var undos []*replace.Undo
	revert := func() {
		for k := len(undos) - 1; k >= 0; k-- {
			_ = undos[k].Revert()
		}
	}
	for i, s := range steps {
		if testHookRename != nil {
			testHookRename(s.at)
		}
		var err error
		var u *replace.Undo
		if s.staged != nil {
			expect := s.c.expect
			if s.c.newPath != "" {
				expect = replace.Expect{Absent: true}
			}
			u, err = s.staged.CommitUndo(expect)
			steps[i].staged = nil
			if err == nil {
				undos = append(undos, u)
			}
		}
		if err == nil && s.c.removes {
			u, err = replace.RemoveUndo(r, s.c.target, s.c.expect)
			if err == nil {
				undos = append(undos, u)
			}
		}
		if err != nil {
			revert()
			for _, rest := range steps[i+1:] {
				if rest.staged != nil {
					rest.staged.Abort()
				}
			}
			var changed *replace.Changed
			if errors.As(err, &changed) {
				return fmt.Errorf("%s: %s", s.c.res.Path, changed)
			}
			return fmt.Errorf("%s: cannot write: %s", s.c.res.Path, replace.Reason(err))
		}
	}
	return replace.Done(undos)
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
