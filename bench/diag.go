package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"toolkit/internal/lsp"
)

// errSkipped says a row was not measured: its note says why.
var errSkipped = errors.New("not measured")

// diagEdit measures an edit of net/http/server.go in a copy of Go's own
// source with gopls warm: toolkit edit's wall time, its diagnostics
// included (history off: this is the diagnostics' cost), against a minimal
// LSP client's didChange → publishDiagnostics of that version, on the same
// edit, in this process. Each side first makes gopls load the tree (cold,
// up to 2 minutes), then toggles one line in and out, runs times each.
func diagEdit(e *benchEnv) (row, error) {
	c := comparison{group: "diagnostics", name: "an edit of net/http/server.go in Go's source, gopls warm: toolkit edit, diagnostics included, against a minimal LSP client's didChange → versioned publish",
		base: []string{"internal/lsp's client of gopls, in process"}, target: "≤ 1.3×, ≤ 400 ms", limit: 1.3, maxMS: 400}
	gopls, err := exec.LookPath("gopls")
	if err != nil {
		e.notes = append(e.notes, c.name+": not measured: gopls is not installed (go install golang.org/x/tools/gopls@v0.23.0)")
		return row{}, errSkipped
	}
	src := e.path("gosrc")
	if _, err := os.Stat(src); err != nil {
		if out, err := exec.Command("cp", "-a", goSource(), src).CombinedOutput(); err != nil {
			return row{}, fmt.Errorf("copying Go's source: %v: %s", err, out)
		}
	}
	file := filepath.Join(src, "net", "http", "server.go")
	orig, err := os.ReadFile(file)
	if err != nil {
		return row{}, err
	}
	// A declaration put in after the imports, and taken out: a change
	// gopls checks the whole package for, that breaks nothing.
	const marker = "// Errors used by the HTTP server.\n"
	const added = "var _ = 1\n\n"
	edited := bytes.Replace(orig, []byte(marker), []byte(added+marker), 1)

	// The baseline: a client of its own, gopls's text the file's, one
	// change at a time.
	s, err := lsp.Start("gopls", []string{gopls}, src, nil, nil)
	if err != nil {
		return row{}, err
	}
	defer s.Close(5 * time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := s.Diagnose(ctx, file, "go", string(orig)); err != nil {
		return row{}, fmt.Errorf("gopls, cold: %w", err)
	}
	var base []measure
	for i := range e.runs {
		text := orig
		if i%2 == 0 {
			text = edited
		}
		start := time.Now()
		if _, err := s.Diagnose(ctx, file, "go", string(text)); err != nil {
			return row{}, fmt.Errorf("gopls: %w", err)
		}
		base = append(base, measure{wall: time.Since(start)})
	}
	s.Close(5 * time.Second)

	// toolkit: its own kept gopls, warmed by a first edit.
	state := e.path("diag-state")
	env := []string{"TOOLKIT_STATE=" + state, "TOOLKIT_HISTORY=off", "TOOLKIT_DIAGNOSTICS_WAIT=120s"}
	in := e.path("diag-edit.json")
	edit := func(from, to string) error {
		b := fmt.Sprintf(`{"path":%q,"edits":[{"old_text":%q,"new_text":%q}]}`, file, from, to)
		return os.WriteFile(in, []byte(b), 0o644)
	}
	add, remove := func() error { return edit(marker, added+marker) }, func() error { return edit(added+marker, marker) }
	// answered runs the edit in, its text read: gopls answered it, not a
	// syntax check in its place.
	answered := func(when string) error {
		f, err := os.Open(in)
		if err != nil {
			return err
		}
		defer f.Close()
		cmd := exec.Command(e.toolkit, "edit")
		cmd.Env = append(os.Environ(), env...)
		cmd.Stdin = f
		if out, err := cmd.Output(); err != nil || !strings.Contains(string(out), "(gopls;") {
			return fmt.Errorf("toolkit edit, %s: %v: %s", when, err, out)
		}
		return nil
	}
	if err := add(); err != nil {
		return row{}, err
	}
	if err := answered("cold"); err != nil {
		return row{}, err
	}
	if err := remove(); err != nil {
		return row{}, err
	}
	var tool []measure
	for i := range e.runs {
		t, err := run([]string{e.toolkit, "edit"}, in, env)
		if err != nil {
			return row{}, err
		}
		tool = append(tool, t)
		next := add
		if i%2 == 1 {
			next = remove
		}
		if err := next(); err != nil {
			return row{}, err
		}
	}
	// The last edit, once more.
	if err := answered("warm"); err != nil {
		return row{}, err
	}
	stop := exec.Command(e.toolkit, "job", "--stop-all")
	stop.Env = append(os.Environ(), env...)
	_ = stop.Run()
	_ = os.WriteFile(file, orig, 0o644)
	return row{c: c, base: median(base), tool: median(tool)}, nil
}
