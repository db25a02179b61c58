package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// moreCases are the rows of the grep prefilter, the start-up floor and
// history: their baselines (ripgrep, a static Go hello, git) in the same
// run.
func moreCases(e *benchEnv) []comparison {
	tk := e.toolkit
	src := goSource()
	warm := func() error { return exec.Command("sh", "-c", "grep -rq \"warm the cache\" \"$0\"; true", src).Run() }
	var out []comparison
	for _, p := range []struct{ pattern, flag string }{
		{`TODO|FIXME`, ""}, {`fatal.error`, "-i"}, {`errors\.New\("[a-z]`, ""}, {`func \w+Handler`, ""}, {`func.main`, ""}, {`[a-z]+_[0-9]{3}`, ""},
	} {
		rg := []string{"rg", "-n", "--no-ignore", "-j2"}
		tool := []string{tk, "grep", "--no-ignore", "--limit", "1000000"}
		target, limit := "≤ 1.0×", 1.0
		if p.flag != "" {
			rg = append(rg, p.flag)
			tool = append(tool, "--ignore-case")
		}
		if p.pattern == `[a-z]+_[0-9]{3}` {
			target, limit = "≤ 1.5× (no literal)", 1.5
		}
		name := fmt.Sprintf("%s%s, every match, against ripgrep 13 -j2, Go's source tree", p.pattern, map[bool]string{true: " (ignore case)", false: ""}[p.flag != ""])
		out = append(out, comparison{
			group: "grep-rg", name: name, needs: "rg",
			base: append(rg, p.pattern, src), tool: append(tool, p.pattern, src),
			runs: e.runs, target: target, limit: limit, setup: warm,
		})
	}
	out = append(out, comparison{
		group: "grep-rg", name: "fatal.error (ignore case), every match, against GNU grep -rniI",
		base: []string{"grep", "-rniI", `fatal.error`, src}, tool: []string{tk, "grep", "--no-ignore", "--ignore-case", "--limit", "1000000", `fatal.error`, src},
		runs: e.runs, target: "≤ 1.0×", limit: 1.0, setup: warm,
	})

	// Start-up: static Go programs built with install.sh's flags.
	hello, shtrue := e.path("hello"), e.path("shtrue")
	build := func(bin, pkg string) func() error {
		return func() error {
			cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", bin, pkg)
			cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
			if out, err := cmd.CombinedOutput(); err != nil {
				return fmt.Errorf("%v: %s", err, out)
			}
			return nil
		}
	}
	out = append(out,
		comparison{
			group: "startup", name: "toolkit --version, against a static Go program that prints a line",
			base: []string{hello}, tool: []string{tk, "--version"},
			runs: 8 * e.runs, target: "≤ 1.25×", limit: 1.25, setup: build(hello, "./bench/startup/hello"),
		},
		comparison{
			group: "startup", name: "toolkit shell true, against a static Go program that execs sh -c true",
			base: []string{shtrue}, tool: []string{tk, "shell", "true"},
			runs: 8 * e.runs, target: "≤ 1.3×", limit: 1.3, setup: build(shtrue, "./bench/startup/shtrue"),
		},
	)

	// History on a copy of Go's source tree made a git repository.
	tree := e.path("history-tree")
	makeTree := func() error {
		if _, err := os.Stat(filepath.Join(tree, ".git")); err == nil {
			return nil
		}
		script := `cp -r "$0" "$1" && cd "$1" && git init -q && git add -A && git -c user.name=b -c user.email=b@b commit -qm base`
		return exec.Command("sh", "-c", script, src, tree).Run()
	}
	// A baseline kept, then nothing changed: without a keeper each call
	// walks the tree before and after its command; with one, it asks what
	// changed and walks nothing.
	bare := []string{tk, "shell", "--history", "undo", "--history-keeper=false", "--cwd", tree, "true"}
	kept := []string{tk, "shell", "--history", "undo", "--cwd", tree, "true"}
	watching := func() error {
		for range 600 {
			out, err := exec.Command(tk, "job").Output()
			if err == nil && strings.Contains(string(out), ": watching "+tree) {
				return nil
			}
			time.Sleep(50 * time.Millisecond)
		}
		return fmt.Errorf("no history keeper watches %s", tree)
	}
	out = append(out,
		comparison{
			group: "history", name: "change detection by a full scan (a shell call, no keeper), against git status --porcelain, Go's source tree",
			base: []string{"git", "-C", tree, "status", "--porcelain"},
			tool: []string{tk, "shell", "--history", "report", "--history-keeper=false", "--cwd", tree, "true"},
			runs: e.runs, target: "≤ 0.8× (two scans: before and after)", limit: 1.6,
			setup: func() error {
				if err := makeTree(); err != nil {
					return err
				}
				return exec.Command(tk, "shell", "--history", "report", "--history-keeper=false", "--cwd", tree, "true").Run()
			},
		},
		comparison{
			group: "history", name: "toolkit shell true with history on (its keeper watching), against it off, Go's source tree, the baseline kept",
			base: []string{tk, "shell", "--cwd", tree, "true"}, tool: kept,
			runs: e.runs, target: "≤ 1.5×", limit: 1.5,
			setup: func() error {
				if err := makeTree(); err != nil {
					return err
				}
				if err := exec.Command(kept[0], kept[1:]...).Run(); err != nil {
					return err
				}
				return watching()
			},
		},
		comparison{
			group: "history", name: "toolkit shell true with history on and no keeper (two whole walks), against it off, Go's source tree",
			base: []string{tk, "shell", "--cwd", tree, "true"}, tool: bare,
			runs: e.runs, target: "— (what the keeper saves)",
			setup: func() error {
				// The keeper of the row before goes: it would answer nothing here, but it
				// would still watch.
				if err := exec.Command(tk, "job", "--stop-all").Run(); err != nil {
					return err
				}
				if err := makeTree(); err != nil {
					return err
				}
				return exec.Command(bare[0], bare[1:]...).Run()
			},
		},
		comparison{
			group: "history", name: "the first call on Go's source tree: the baseline captured in the call, against git add -A of a new index",
			base: []string{"sh", "-c", "cd " + tree + " && GIT_INDEX_FILE=" + e.path("bench-index") + " git add -A"},
			tool: []string{"sh", "-c", "rm -rf " + e.path("state-first") + " && TOOLKIT_STATE=" + e.path("state-first") + " " + tk + " shell --history undo --history-keeper=false --cwd " + tree + " true"},
			runs: 3, target: "toolkit ≤ 3 s", maxMS: 3000,
			setup: makeTree,
		},
	)
	return out
}
