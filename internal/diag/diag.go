// Package diag tells a model what its change broke: after a write, edit,
// patch or shell call, the diagnostics of the files the call changed that
// were not there before it.
//
// "New" is exact: the diagnostics of a file's content before the call are
// moved through the call's line map (internal/diff), those on the lines it
// removed or rewrote dropped, then matched one for one against those of
// the content after it (Compare). A check runs under one deadline per call and
// says what it did not do: a file no checker answered for in time is
// "not checked", never clean. The write is done, and history has recorded
// it, before a check starts; a check never fails or undoes a change.
//
// The checkers come in tiers, each named in what it says: a language
// server kept between calls (keeper.go), else a syntax check: JSON in
// process, then the programs the image has (gofmt, bash -n, sh -n,
// python3's compile, node --check).
package diag

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"toolkit/internal/diff"
	"toolkit/internal/outcome"
	"toolkit/internal/proc"
	"toolkit/internal/text"
)

// Severities, as LSP names them.
const (
	Error   = "error"
	Warning = "warning"
)

// Modes of a call's diagnostics field.
const (
	Off = "off"
	New = "new"
	All = "all"
)

// MaxFiles is how many changed files one call checks; past it, a call
// checks none and says so.
const MaxFiles = 20

// noServer says why a file of a language a server is known for has none:
// "no language server for .py (pyright not found)"; "" for another.
func noServer(path string, specs []Spec) string {
	ext := strings.ToLower(filepath.Ext(path))
	for _, sp := range specs {
		if slices.Contains(sp.Exts, ext) {
			return fmt.Sprintf("no language server for %s (%s not found)", ext, sp.Name)
		}
	}
	return ""
}

// MaxServerFiles is how many files one check asks of one kept server
// (toolkit diagnostics of a tree); the rest get their syntax checked.
const MaxServerFiles = 50

// MaxBytes is the largest file checked.
const MaxBytes = 4 << 20

// Ask is what a call asks for: which diagnostics, of what severity, how
// long it waits for them.
type Ask struct {
	Mode     string        // off, new, all
	Severity string        // error, or warning for warnings too
	Wait     time.Duration // the deadline of all the call's checks
	// Servers are the language servers to keep, the host's first; nil:
	// Servers. Lifetime is how long one is kept without a check (default
	// DefaultLifetime); Owner, where set, the toolkit mcp it ends with.
	Servers  []Spec
	Lifetime time.Duration
	Owner    string
	// MemoryMB, where more than 0, is the most a kept server's processes
	// may hold resident (--limit-memory): past it, it is stopped.
	MemoryMB int
	// Dir is the directory the call works in: other files' paths are
	// said from it.
	Dir string
	// Fixes asks the servers for their quick fixes (toolkit diagnostics).
	Fixes bool
	// Touched are all the files the call changed, by host path, each
	// "A", "M" or "D": a kept server is told of those it is not asked
	// to check (workspace/didChangeWatchedFiles).
	Touched map[string]string
}

// DefaultLifetime is how long a language server is kept without a check.
const DefaultLifetime = 10 * time.Minute

func (a Ask) servers() []Spec {
	if a.Servers == nil {
		return Servers
	}
	return a.Servers
}

func (a Ask) lifetime() time.Duration {
	if a.Lifetime <= 0 {
		return DefaultLifetime
	}
	return a.Lifetime
}

// Change is a file a call changed, as the check needs it.
type Change struct {
	Path string // its host path
	Rel  string // its name as the call's text says it
	Top  string // the directory nothing above which is read (--root), or ""
	// Before is its content before the call, where Existed; BeforeKnown
	// says it is had (a content too large to keep is not).
	Before      []byte
	Existed     bool
	BeforeKnown bool
	After       []byte
	// TooLarge says the file is larger than MaxBytes: not checked.
	TooLarge bool
}

type file struct {
	path, rel, top string
	content        []byte
}

// checker finds the diagnostics of one file's content.
type checker struct {
	by      string // what the model is told checked it
	tier    string // syntax (in process) or command
	program string // the program it runs, looked for on PATH; "" in process
	check   func(ctx context.Context, f file) ([]outcome.Diagnostic, error)
	// disk says it checks the file as it is on disk, not the content it
	// is given: it cannot check the content before the call.
	disk bool
}

var (
	goParser   = &checker{by: "gofmt", tier: "syntax", program: "gofmt", check: goSyntax}
	jsonParser = &checker{by: "json", tier: "syntax", check: jsonSyntax}
	shellN     = &checker{by: "sh -n", tier: "syntax", program: "sh", check: shellSyntax}
	python     = &checker{by: "python3", tier: "syntax", program: "python3", check: pythonCompile}
	node       = &checker{by: "node --check", tier: "syntax", program: "node", check: nodeCheck}
	tsc        = &checker{by: "tsc", tier: "command", program: "tsc", check: tscCheck, disk: true}
)

// byExt are the checkers of each file name extension.
var byExt = map[string]*checker{
	".go": goParser, ".json": jsonParser,
	".sh": shellN, ".bash": shellN,
	".py": python, ".pyi": python,
	".js": node, ".mjs": node, ".cjs": node,
	".ts": tsc, ".tsx": tsc, ".mts": tsc, ".cts": tsc,
}

// sources are the extensions of code with no checker here yet: a change
// to one says so; a change to a file of another kind (text, data) says
// nothing.
var sources = []string{".jsx", ".rs", ".c", ".h", ".cc", ".cpp", ".cxx", ".hpp", ".hh", ".java", ".kt", ".kts",
	".rb", ".php", ".cs", ".swift", ".scala", ".lua", ".zig", ".ex", ".exs", ".hs", ".ml", ".dart", ".zsh", ".fish", ".jsonc"}

// jsonWithComments are JSON files that their tools read with comments and
// trailing commas allowed: not JSON, not checked as JSON.
func jsonWithComments(name string) bool {
	base := strings.ToLower(filepath.Base(name))
	return strings.HasPrefix(base, "tsconfig") || strings.HasPrefix(base, "jsconfig") || base == ".eslintrc.json" || base == "devcontainer.json" ||
		base == ".devcontainer.json" || strings.Contains(filepath.ToSlash(name), ".vscode/")
}

// checkerOf is the checker of the file named path, or nil and why there
// is none ("" where nothing is worth saying).
func checkerOf(path string) (*checker, string) {
	ext := strings.ToLower(filepath.Ext(path))
	c := byExt[ext]
	switch {
	case c == jsonParser && jsonWithComments(path):
		return nil, "" // configuration, said by nothing
	case c == nil && slices.Contains(sources, ext):
		return nil, "no checker for " + ext
	case c == nil:
		return nil, ""
	case c.program != "" && !found(c.program):
		return nil, "no checker for " + ext + " (" + c.program + " is not on PATH)"
	}
	return c, ""
}

var lookups sync.Map // program → bool

func found(program string) bool {
	if ok, had := lookups.Load(program); had {
		return ok.(bool)
	}
	ok := proc.LookPath(program)
	lookups.Store(program, ok)
	return ok
}

// Checkable says whether a change to the file named path would be checked
// or said not to be: by a server a asks for, or a syntax check. The files
// a shell call counts against MaxFiles.
func (a Ask) Checkable(path string) bool {
	ext := strings.ToLower(filepath.Ext(path))
	for _, sp := range a.servers() {
		if slices.Contains(sp.Exts, ext) {
			return true
		}
	}
	c, why := checkerOf(path)
	return c != nil || why != ""
}

// Check checks the files changes names and says what it found, under the
// deadline ask.Wait; nil when none of them is a file a checker knows. A
// file a language server is kept for is asked of it, its syntax checked
// meanwhile in case the server does not answer in time.
func Check(ctx context.Context, changes []Change, ask Ask) *outcome.Diagnostics {
	if ask.Mode == Off || ask.Wait <= 0 {
		return nil
	}
	ctx, cancel := context.WithTimeoutCause(ctx, ask.Wait, errTimedOut)
	defer cancel()
	ctx = withRuns(ctx)
	began := time.Now()
	results := make([]result, len(changes))
	answers := make([]*serverAnswer, len(changes))
	groups := map[string]*group{} // by kept server
	finder := &keptFinder{ask: ask, seen: map[string]*kept{}}
	var wg sync.WaitGroup
	// A check may run a program: a few at a time, as many as the CPUs.
	slots := make(chan struct{}, max(4, runtime.NumCPU()))
	said := false
	for i, ch := range changes {
		c, why := checkerOf(ch.Path)
		k := finder.of(ch.Path, ch.Top)
		if k != nil && c != nil && c.disk {
			c = nil // a whole project's check (tsc) is not run beside its server
		}
		switch {
		case c == nil && k == nil && why != "":
			results[i].notChecked = why
			if ns := noServer(ch.Path, ask.servers()); ns != "" {
				results[i].notChecked = ns
			}
			said = true
			continue
		case c == nil && k == nil:
			continue
		case ch.TooLarge:
			results[i].notChecked = "larger than " + text.Bytes(MaxBytes) + ": not checked"
			said = true
			continue
		}
		said = true
		var past string // why a file a server knows is not asked of it
		if k == nil {
			past = noServer(ch.Path, ask.servers())
		} else {
			g := groups[k.ident]
			if g == nil {
				g = &group{k: *k}
				groups[k.ident] = g
			}
			if len(g.files) < MaxServerFiles {
				g.files = append(g.files, i)
			} else {
				past = fmt.Sprintf("%s checks %d files a call", k.Name, MaxServerFiles)
			}
		}
		if c == nil {
			results[i].notChecked = "no answer"
			if past != "" {
				results[i].notChecked = past
			}
			continue
		}
		wg.Go(func() {
			select {
			case slots <- struct{}{}:
				defer func() { <-slots }()
				results[i] = checkOne(ctx, c, ch, ask)
				if past != "" && results[i].checked != nil {
					results[i].checked.Why = past
				}
			case <-ctx.Done():
				results[i] = result{notChecked: whyNot(c, context.Cause(ctx), ask)}
			}
		})
	}
	for _, g := range groups {
		wg.Go(func() { g.check(ctx, changes, answers, ask) })
	}
	wg.Wait()
	if !said {
		return nil
	}
	d := &outcome.Diagnostics{Checked: []outcome.Checked{}, New: []outcome.Diagnostic{}}
	for i, r := range results {
		if a := answers[i]; a != nil {
			r = a.result(changes[i], r, ask)
		}
		switch {
		case r.notChecked != "":
			d.NotChecked = append(d.NotChecked, outcome.NotChecked{Path: changes[i].Rel, Why: r.notChecked})
		case r.checked != nil:
			d.Checked = append(d.Checked, *r.checked)
			d.New = append(d.New, r.fresh...)
			d.Already += r.already
			if ask.Mode == All {
				d.All = append(d.All, r.all...)
			}
		}
	}
	for _, g := range groups {
		d.Elsewhere = append(d.Elsewhere, bySeverity(g.elsewhere, ask.Severity)...)
	}
	d.Elsewhere = elsewhere(d.Elsewhere, changes)
	d.Seconds = seconds(time.Since(began))
	return d
}

// result is what checking one file found.
type result struct {
	checked    *outcome.Checked
	fresh, all []outcome.Diagnostic
	already    int
	notChecked string
}

// checkOne checks one file's content after the call; where that has
// diagnostics, its content before too, to tell the new ones.
func checkOne(ctx context.Context, c *checker, ch Change, ask Ask) result {
	after, err := c.check(ctx, file{path: ch.Path, rel: ch.Rel, top: ch.Top, content: ch.After})
	if err != nil {
		return result{notChecked: whyNot(c, err, ask)}
	}
	after = bySeverity(after, ask.Severity)
	r := result{checked: &outcome.Checked{Path: ch.Rel, By: c.by, Tier: c.tier, Baseline: true}, all: after}
	switch {
	case len(after) == 0:
		return r
	case !ch.Existed:
		r.fresh = after
		return r
	case !ch.BeforeKnown:
		r.checked.Baseline = false
		r.fresh = after
		return r
	}
	m := diff.Lines(ch.Before, ch.After)
	if c.disk {
		// The content before is not on disk to check.
		r.checked.Baseline = false
		r.fresh = OnChanged(after, m)
		return r
	}
	before, err := c.check(ctx, file{path: ch.Path, rel: ch.Rel, top: ch.Top, content: ch.Before})
	if err != nil {
		// What the call's own lines hold is still said.
		r.checked.Baseline = false
		r.fresh = OnChanged(after, m)
		return r
	}
	r.fresh, r.already = Compare(bySeverity(before, ask.Severity), m, after)
	return r
}

// bySeverity is ds without those below the severity asked: errors, or
// with "warning" warnings too.
func bySeverity(ds []outcome.Diagnostic, severity string) []outcome.Diagnostic {
	return slices.DeleteFunc(ds, func(d outcome.Diagnostic) bool {
		return d.Severity != Error && !(severity == Warning && d.Severity == Warning)
	})
}
