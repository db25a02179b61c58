// Package diagnostics shows the current diagnostics of files: what the
// checks toolkit runs after every change (internal/diag) find in them as
// they are, not only what a call brought.
//
//	toolkit diagnostics [flags] [PATH...]
//	echo '{"paths":["src"]}' | toolkit diagnostics
//
// A directory is walked as glob walks it (what .gitignore ignores, .git
// and hidden names are left out); each file of a language toolkit has a
// checker for is checked, at most MaxFiles of them, under the host's
// --diagnostics-wait; a file no checker answered for in time is said not
// checked. The diagnostics are listed by path and line, a page at a time,
// then a line that counts them and says how to go on.
package diagnostics

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"toolkit/internal/cmdline"
	"toolkit/internal/diag"
	"toolkit/internal/outcome"
	"toolkit/internal/page"
	"toolkit/internal/replace"
	"toolkit/internal/root"
	"toolkit/internal/text"
	"toolkit/internal/walk"
)

// Args is the input of one diagnostics call.
type Args struct {
	Paths    []string `json:"paths,omitempty" flag:"PATH..." desc:"Files or directories to check. Default: the working directory (the root with --root)."`
	Severity *string  `json:"severity,omitempty" flag:"--severity LEVEL" usage:"error (default) or warning for warnings too" check:"oneof=error warning" desc:"Which diagnostics are listed: error (the default), or warning for warnings too."`
	Offset   *int     `json:"offset,omitempty" flag:"--offset N" check:"min=1" desc:"The first diagnostic to show, from 1, to go on after a page."`
	Limit    *int     `json:"limit,omitempty" flag:"--limit N" check:"min=1" desc:"How many diagnostics to show; default 100."`
	NoFixes  bool     `json:"no_fixes,omitempty" flag:"--no-fixes" desc:"Leave out the language servers' quick fixes (by default each of the first 20 diagnostics a server found comes with its quick fix, where it has one, as a unified diff that the patch tool applies)."`
}

// DefaultLimit is how many diagnostics a call shows unless it asks.
const DefaultLimit = 100

// MaxFiles is the most files one call checks.
const MaxFiles = 5000

// Details are the facts of a diagnostics call for --json, beside its
// "diagnostics" (all of them, in "all").
type Details struct {
	Found      int  `json:"found"`
	Shown      int  `json:"shown"`
	NextOffset *int `json:"next_offset"`
	Files      int  `json:"files"`
	// Over says more files than MaxFiles were found: the first MaxFiles,
	// in path order, were checked.
	Over bool `json:"over,omitempty"`
}

// Applet is diagnostics' command line and in-process call.
var Applet = cmdline.Applet[Args]{
	Name:        "diagnostics",
	Usage:       "show the current errors of files or of the tree, as toolkit checks them after a change",
	Synopsis:    "toolkit diagnostics [flags] [PATH...]",
	Example:     `{"paths":["src"]}`,
	Description: Description,
	Details:     Details{},
	Hints:       cmdline.Hints{ReadOnly: true, Idempotent: true},
	Settings:    diag.Settings,
	Bare:        true,
	Run: func(ctx context.Context, a *Args, h cmdline.Host) outcome.Outcome {
		ask, err := diag.HostAsk(h.Settings)
		if err != nil {
			return outcome.Misuse("%s", err)
		}
		return Run(ctx, *a, h.Root, ask)
	},
}

// Description tells a model when to use diagnostics and what it returns.
const Description = `Show the current errors of files or directories (default: the working directory): what the language servers (gopls, pyright, typescript-language-server, rust-analyzer, clangd) and syntax checks find, as toolkit reports after each write, edit, patch and shell call, here all of them, not only a call's new ones. Use it after a shell command changed more files than a call checks, or to see what is broken before you start. Each line is path:line:col: severity: message, by path and line, a page at a time (offset, limit); a server's quick fix follows its diagnostic as a unified diff, which the patch tool applies.`

// Run carries out one diagnostics call, under the host's ask: its wait,
// its servers.
func Run(ctx context.Context, a Args, r *root.Root, ask diag.Ask) outcome.Outcome {
	severity := diag.Error
	if a.Severity != nil {
		severity = *a.Severity
	}
	offset, limit := 1, DefaultLimit
	if a.Offset != nil {
		offset = *a.Offset
	}
	if a.Limit != nil {
		limit = *a.Limit
	}
	paths := a.Paths
	if len(paths) == 0 {
		paths = []string{"."}
	}
	top := ""
	if r != nil {
		top = r.Dir()
	}
	if ask.Dir, _ = r.HostPath("."); ask.Dir != "" {
		ask.Dir, _ = filepath.Abs(ask.Dir)
	}
	var files []diag.Change
	for _, name := range paths {
		found, err := collect(ctx, r, name, top, ask)
		if err != nil {
			return outcome.Failure("%s: %s", name, root.Reason(err))
		}
		files = append(files, found...)
	}
	slices.SortFunc(files, func(x, y diag.Change) int { return strings.Compare(x.Rel, y.Rel) })
	files = slices.CompactFunc(files, func(x, y diag.Change) bool { return x.Path == y.Path })
	over := len(files) > MaxFiles
	if over {
		files = files[:MaxFiles]
	}
	if ask.Wait <= 0 {
		return outcome.Failure("the host's --diagnostics-wait is 0: no check runs")
	}
	ask.Mode, ask.Severity, ask.Fixes = diag.All, severity, !a.NoFixes
	d := diag.Check(ctx, files, ask)
	if d == nil {
		d = &outcome.Diagnostics{Checked: []outcome.Checked{}}
	}
	d.New = nil // none is new: these are all there are
	slices.SortFunc(d.All, func(x, y outcome.Diagnostic) int {
		if c := strings.Compare(x.Path, y.Path); c != 0 {
			return c
		}
		return x.Line - y.Line
	})
	det := Details{Found: len(d.All), Files: len(d.Checked), Over: over}
	shown := page.Of(d.All, offset, limit)
	det.Shown = len(shown)
	var b strings.Builder
	for _, x := range shown {
		b.WriteString(diag.Line(x) + "\n")
		if x.Fix != nil {
			fmt.Fprintf(&b, "[quick fix: %s — the patch tool applies it:]\n%s", x.Fix.Title, x.Fix.Diff)
		}
	}
	b.WriteString(summary(d, severity, over) + "\n")
	if nc := diag.NotChecked(d.NotChecked); nc != "" {
		b.WriteString(nc + "\n")
	}
	if next := offset + len(shown); next <= len(d.All) {
		det.NextOffset = &next
		fmt.Fprintf(&b, "[shown %d-%d of %d; next: offset %d]\n", offset, next-1, len(d.All), next)
	}
	o := outcome.Success(b.String(), det)
	o.Diagnostics = d
	return o
}

// summary is the line that counts what was found, and by what.
func summary(d *outcome.Diagnostics, severity string, over bool) string {
	if len(d.Checked) == 0 {
		return "[diagnostics: no file here is one toolkit has a checker for]"
	}
	var by []string
	files := map[string]bool{}
	for _, c := range d.Checked {
		if !slices.Contains(by, c.By) {
			by = append(by, c.By)
		}
	}
	for _, x := range d.All {
		files[x.Path] = true
	}
	noun := "error"
	if severity == diag.Warning {
		noun = "diagnostic"
	}
	checked := text.Count(int64(len(d.Checked)), "file") + " checked"
	s := fmt.Sprintf("[diagnostics: no %ss in %s", noun, checked)
	if len(d.All) > 0 {
		s = fmt.Sprintf("[diagnostics: %s in %d of %s", text.Count(int64(len(d.All)), noun), len(files), checked)
	}
	s += fmt.Sprintf(" (%s; %.1f s)", strings.Join(by, ", "), d.Seconds)
	if over {
		s += fmt.Sprintf("; the first %d files only: name a directory", MaxFiles)
	}
	return s + "]"
}

// collect are the files under name (a file, or a directory walked) that
// a checker knows, with their contents.
func collect(ctx context.Context, r *root.Root, name, top string, ask diag.Ask) ([]diag.Change, error) {
	fi, err := r.Stat(name)
	if err != nil {
		return nil, err
	}
	host, err := r.HostPath(name)
	if err != nil {
		return nil, err
	}
	host, _ = filepath.Abs(host)
	if !fi.IsDir() {
		content, _, err := replace.ReadUpTo(r, name, diag.MaxBytes)
		if err != nil {
			return nil, err
		}
		return []diag.Change{{Path: host, Rel: name, Top: top, After: content, TooLarge: content == nil && fi.Size() > 0}}, nil
	}
	var mu sync.Mutex
	var out []diag.Change
	_, err = walk.Dir(ctx, r, name, walk.Options{}, func(e walk.Entry) bool {
		if !e.Type.IsRegular() || !ask.Checkable(e.Name) {
			return true
		}
		content, err := e.ReadFile(diag.MaxBytes)
		if err != nil && !errors.Is(err, walk.ErrTooLarge) {
			return true
		}
		c := diag.Change{Path: filepath.Join(host, filepath.FromSlash(e.Path)), Rel: walk.Join(name, e.Path), Top: top, After: content, TooLarge: err != nil}
		mu.Lock()
		out = append(out, c)
		mu.Unlock()
		return true
	})
	return out, err
}
