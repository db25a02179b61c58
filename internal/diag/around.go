package diag

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"time"

	"toolkit/internal/cmdline"
	"toolkit/internal/history"
	"toolkit/internal/keep"
	"toolkit/internal/outcome"
	"toolkit/internal/replace"
)

// Fields are a call's diagnostics fields, which write, edit, patch and
// shell take: their Args embed them.
type Fields struct {
	Diagnostics     *string `json:"diagnostics,omitempty" flag:"--diagnostics MODE" usage:"after the change, the diagnostics of the files it changed: MODE new, all or off (default off here)" check:"oneof=off new all" desc:"After the change, the diagnostics (syntax errors, and a language server's errors) of the files the call changed: new (the default) lists those the call brought, all lists every one, off checks nothing."`
	Severity        *string `json:"severity,omitempty" flag:"--severity LEVEL" usage:"the diagnostics shown: LEVEL error (default) or warning for warnings too" check:"oneof=error warning" desc:"Which diagnostics are shown: error (the default), or warning for warnings too."`
	DiagnosticsWait *int    `json:"diagnostics_wait,omitempty" check:"min=0" desc:"The most seconds to wait for the diagnostics (default and most: the host's, 5); a file not checked in time is said not checked."`
}

// DiagnosticsFields is f: what a wrapper reads of a call's Args.
func (f *Fields) DiagnosticsFields() *Fields { return f }

type asker interface{ DiagnosticsFields() *Fields }

// Wait is the host's ceiling on a call's wait for its diagnostics: 0
// checks nothing.
var Wait = &cmdline.Setting[time.Duration]{Name: "diagnostics-wait", Env: "TOOLKIT_DIAGNOSTICS_WAIT", Person: 5 * time.Second,
	Usage: "wait at most `DURATION` after a write, edit, patch or shell call for the diagnostics of the files it changed (a call's diagnostics_wait may ask less); 0 checks none"}

// Lifetime is how long a language server is kept without a check.
var Lifetime = &cmdline.Setting[time.Duration]{Name: "diagnostics-lifetime", Env: "TOOLKIT_DIAGNOSTICS_LIFETIME", Person: DefaultLifetime,
	Usage: "end a kept language server after `DURATION` without a check"}

// LSP adds language servers to those toolkit knows, or replaces one.
var LSP = &cmdline.Setting[string]{Name: "lsp", Env: "TOOLKIT_LSP",
	Usage: "language servers to keep, before the built-in ones (gopls, pyright, typescript-language-server, rust-analyzer, clangd): `NAME=COMMAND:EXTS:MARKERS`, several apart by ';' (\"kotlin=kotlin-lsp --stdio:.kt,.kts:build.gradle.kts\"); off keeps none"}

// Settings are the host settings of the applets diagnostics follow.
var Settings = []cmdline.AnySetting{Wait, Lifetime, LSP, cmdline.LimitMemory}

// HostAsk is what the host's settings s ask of every check: the wait, the
// servers, their lifetime and owner. A wrong --lsp is an error.
func HostAsk(s cmdline.Settings) (Ask, error) {
	a := Ask{Mode: New, Severity: Error, Wait: 5 * time.Second, Owner: os.Getenv(keep.OwnerEnv)}
	if s == nil {
		return a, nil
	}
	a.Wait = Wait.Get(s)
	a.Lifetime = Lifetime.Get(s)
	a.MemoryMB = max(0, cmdline.LimitMemory.Get(s))
	if v := LSP.Get(s); v == "off" {
		a.Servers = []Spec{}
	} else if v != "" {
		host, err := ParseLSP(v)
		if err != nil {
			return a, err
		}
		for _, sp := range Servers {
			if !slices.ContainsFunc(host, func(h Spec) bool { return h.Name == sp.Name }) {
				host = append(host, sp)
			}
		}
		a.Servers = host
	}
	return a, nil
}

// ask is what the call asks for, under the host's ceiling; a wrong --lsp
// keeps no server, and its error is said.
func ask(c cmdline.Call) (Ask, error) {
	a, err := HostAsk(c.Host.Settings)
	if err != nil {
		a.Servers = []Spec{}
	}
	if c.Host.Person {
		a.Mode = Off
	}
	f, ok := c.Args.(asker)
	if !ok {
		return Ask{Mode: Off}, nil
	}
	fs := f.DiagnosticsFields()
	if fs.Diagnostics != nil {
		a.Mode = *fs.Diagnostics
	}
	if fs.Severity != nil {
		a.Severity = *fs.Severity
	}
	if fs.DiagnosticsWait != nil {
		a.Wait = min(a.Wait, time.Duration(*fs.DiagnosticsWait)*time.Second)
	}
	return a, err
}

// Around is diagnostics around a call that changes files (write, edit,
// patch, shell), outside history: once the call is done and recorded,
// the files it changed are checked, and what was found is said in a
// bracketed block among its lines (a command's exit line stays last).
// write, edit and patch say what they wrote, its content before
// included; a shell call's files are those history found it changed, the
// content before each from history's store.
func Around(ctx context.Context, c cmdline.Call, next cmdline.Next) outcome.Outcome {
	a, hostErr := ask(c)
	if a.Mode == Off || a.Wait <= 0 {
		return next(ctx, c.Host)
	}
	h := c.Host
	h.Keeps = max(h.Keeps, MaxBytes) // write reads the content before up to it
	a.Dir = c.Dir()
	o := next(ctx, h)
	if o.Kind != outcome.Done {
		return o
	}
	top := ""
	if h.Root != nil {
		top = h.Root.Dir()
	}
	var changes []Change
	tooMany := 0
	switch {
	case o.Wrote != nil:
		changes = said(o.Wrote, a.Dir, top)
		a.Touched = map[string]string{}
		for _, w := range o.Wrote {
			a.Touched[w.Path] = w.Status()
		}
	case o.Changes != nil && o.Command != nil:
		changes, tooMany, a.Touched = scanned(o.Changes, a, top)
	}
	var d *outcome.Diagnostics
	if tooMany > 0 {
		d = &outcome.Diagnostics{Checked: []outcome.Checked{}, New: []outcome.Diagnostic{}, TooMany: tooMany}
	} else {
		d = Check(ctx, changes, a)
	}
	if d == nil {
		return o
	}
	o.Diagnostics = d
	lines := Lines(d, a.Mode == All)
	if hostErr != nil {
		lines = append(lines, "[diagnostics: "+hostErr.Error()+"; no language server is kept]")
	}
	if o.Command != nil {
		return o.WithLines(lines)
	}
	for _, l := range lines {
		o.Text += l + "\n"
	}
	return o
}

// said are the files a write, edit or patch wrote.
func said(wrote []outcome.Wrote, dir, top string) []Change {
	var out []Change
	for _, w := range wrote {
		if !w.Exists {
			continue
		}
		after, tooLarge := w.After, false
		if after == nil || len(after) > MaxBytes {
			var ok bool
			if after, tooLarge, ok = readUpTo(w.Path); !ok {
				continue
			}
		}
		out = append(out, Change{Path: w.Path, Rel: relTo(dir, w.Path), Top: top, Before: w.Before, Existed: w.Existed,
			BeforeKnown: !w.Existed || w.Before != nil, After: after, TooLarge: tooLarge})
	}
	return out
}

// scanned are the files a shell call changed, as history found them:
// none where it changed more source files than MaxFiles, and how many;
// and all it changed, by host path (Ask.Touched).
func scanned(ch *outcome.Changes, a Ask, top string) ([]Change, int, map[string]string) {
	dir := a.Dir
	var rels []string
	for _, f := range ch.Files {
		if f.Status != "D" && f.Files == 0 && f.SaidBy == 0 && a.Checkable(f.Path) {
			rels = append(rels, f.Path)
		}
	}
	if len(rels) == 0 {
		return nil, 0, nil
	}
	if len(rels) > MaxFiles {
		return nil, len(rels), nil
	}
	tree, before, err := history.Before(ch.Call, rels, MaxBytes)
	if err != nil {
		return nil, 0, nil
	}
	touched := map[string]string{}
	for _, f := range ch.Files {
		if f.Files == 0 {
			touched[filepath.Join(tree, f.Path)] = f.Status
		}
	}
	var out []Change
	for _, rel := range rels {
		path := filepath.Join(tree, rel)
		after, tooLarge, ok := readUpTo(path)
		if !ok {
			continue
		}
		b, known := before[rel]
		out = append(out, Change{Path: path, Rel: relTo(dir, path), Top: top, Before: b.Content, Existed: b.Existed, BeforeKnown: known, After: after, TooLarge: tooLarge})
	}
	return out, 0, touched
}

// readUpTo is a regular file's content, where it holds at most MaxBytes
// (replace.ReadUpTo: never blocked by a FIFO put in its place); tooLarge
// where it holds more; false where there is no regular file to check.
func readUpTo(path string) (content []byte, tooLarge, ok bool) {
	b, there, err := replace.ReadUpTo(nil, path, MaxBytes)
	if err != nil || !there {
		return nil, false, false
	}
	return b, b == nil, true
}

// relTo is path as the call's text names it: from its directory, where
// it is under it.
func relTo(dir, path string) string {
	if dir != "" {
		if rel, err := filepath.Rel(dir, path); err == nil && filepath.IsLocal(rel) {
			return rel
		}
	}
	return path
}
