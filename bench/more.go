package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// moreCases are the rows of the grep prefilter, the start-up floor and
// history: their baselines (ripgrep, a static Go hello, git) in the same
// run.
func moreCases(e *benchEnv) []comparison {
	tk := e.toolkit
	src := goSource()
	warm := func() error { return warmCache(src) }
	var out []comparison
	for _, p := range []struct{ pattern, flag string }{
		{`TODO|FIXME`, ""}, {`fatal.error`, "-i"}, {`errors\.New\("[a-z]`, ""}, {`func \w+Handler`, ""}, {`func.main`, ""}, {`[a-z]+_[0-9]{3}`, ""},
		{`[A-Z][a-z]+[0-9]{2,}`, ""},
	} {
		rg := []string{"rg", "-n", "--no-ignore", "-j2"}
		tool := []string{tk, "grep", "--no-ignore", "--limit", "1000000"}
		target, limit := "≤ 1.0×", 1.0
		if p.flag != "" {
			rg = append(rg, p.flag)
			tool = append(tool, "--ignore-case")
		}
		if p.pattern == `[A-Z][a-z]+[0-9]{2,}` {
			target, limit = "≤ 2.0× (no literal; 100,696 matching lines)", 2.0
		}
		name := fmt.Sprintf("%s%s, every match, against ripgrep 13 -j2, Go's source tree", p.pattern, map[bool]string{true: " (ignore case)", false: ""}[p.flag != ""])
		out = append(out, comparison{
			group: "grep-rg", name: name, needs: "rg",
			base: append(rg, p.pattern, src), tool: append(tool, p.pattern, src),
			runs: e.runs, target: target, limit: limit, setup: warm,
		})
	}
	// The same searches as models make them, the first 100 hits, against
	// every match: a limit must cost nothing.
	for _, c := range slices.Clone(out) {
		tool := slices.Clone(c.tool)
		limited := slices.Clone(tool)
		limited[slices.Index(limited, "1000000")] = "100"
		c.name = strings.Replace(c.name, "every match, against ripgrep 13 -j2", "the first 100 (--limit 100), against every match", 1)
		c.base, c.tool, c.needs = tool, limited, ""
		c.target, c.limit = "≤ 1.0×", 1.0
		out = append(out, c)
	}
	// The five patterns with a literal again on a tree of 1 GiB: Go's
	// source tree copied seven times.
	big := e.path("go-src-1g")
	makeBig := func() error {
		if _, err := os.Stat(filepath.Join(big, "7")); err != nil {
			script := `mkdir -p "$1" && for i in 1 2 3 4 5 6 7; do cp -r "$0" "$1/$i"; done`
			if err := exec.Command("sh", "-c", script, src, big).Run(); err != nil {
				return err
			}
		}
		return warmCache(big)
	}
	for _, c := range slices.Clone(out) {
		if strings.HasPrefix(c.name, "[a-z]+_") || strings.HasPrefix(c.name, "[A-Z]") || !strings.Contains(c.name, "ripgrep") {
			continue
		}
		c.name = strings.Replace(c.name, "Go's source tree", "1 GiB (Go's source tree seven times)", 1)
		c.base = append(slices.Clone(c.base[:len(c.base)-1]), big)
		c.tool = append(slices.Clone(c.tool[:len(c.tool)-1]), big)
		c.runs, c.setup = 3, makeBig
		out = append(out, c)
	}
	// Peak memory: toolkit's against ripgrep's, on the same search.
	out = append(out, comparison{
		group: "grep-rg", name: "TODO|FIXME, every match, peak memory against ripgrep 13 -j2, Go's source tree", needs: "rg",
		base: []string{"rg", "-n", "--no-ignore", "-j2", `TODO|FIXME`, src},
		tool: []string{tk, "grep", "--no-ignore", "--limit", "1000000", `TODO|FIXME`, src},
		runs: e.runs, target: "peak ≤ 1.5× the baseline's", peakLimit: 1.5, setup: warm,
	})
	// One directory of many files, which the walk's goroutines share: the
	// files of Go's runtime package (not its subdirectories) three times.
	oneDir := e.path("one-dir")
	makeOneDir := func() error {
		if _, err := os.Stat(oneDir); err != nil {
			script := `mkdir -p "$1.tmp" && for i in 1 2 3; do for f in "$0"/runtime/*; do if [ -f "$f" ]; then cp "$f" "$1.tmp/$i-${f##*/}"; fi; done; done && mv "$1.tmp" "$1"`
			if err := exec.Command("sh", "-c", script, src, oneDir).Run(); err != nil {
				return err
			}
		}
		return warmCache(oneDir)
	}
	out = append(out, comparison{
		group: "grep-rg", name: "TODO|FIXME, every match, against ripgrep 13 -j2, one directory of Go's runtime files three times",
		base: []string{"rg", "-n", "--no-ignore", "-j2", `TODO|FIXME`, oneDir}, needs: "rg",
		tool: []string{tk, "grep", "--no-ignore", "--limit", "1000000", `TODO|FIXME`, oneDir},
		runs: e.runs, target: "report the ratio", setup: makeOneDir,
	})
	// The floor: the same searches by bench/floor/grep, a Go program using
	// the standard library alone, written for speed and nothing else (no
	// ignore files, sorting, limit or binary test but a NUL; the class
	// strings every match holds given). Where toolkit is no slower than
	// it, what is left of the gap to ripgrep is Go's and the machine's. Built with the tag deps, it
	// links what toolkit links besides its own code (bench/deps), as the
	// start-up rows' floor does: its start and its pages in memory are
	// then those toolkit's dependencies set. Built with the tags deps and
	// linked, it links all of toolkit's own code too (bench/linked): a
	// binary of toolkit's size, whose peak toolkit's is measured against.
	floor, floorDeps, floorLinked := e.path("floor-grep"), e.path("floor-grep-deps"), e.path("floor-grep-linked")
	// The floors are built once, for the first of their rows.
	buildFloors := sync.OnceValue(func() error {
		for _, b := range [][]string{{floor}, {floorDeps, "-tags", "deps"}, {floorLinked, "-tags", "deps,linked,urfave_cli_no_docs"}} {
			cmd := exec.Command("go", append([]string{"build", "-trimpath", "-ldflags", "-s -w", "-o", b[0]}, append(b[1:], "./bench/floor/grep")...)...)
			cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
			if out, err := cmd.CombinedOutput(); err != nil {
				return fmt.Errorf("%v: %s", err, out)
			}
		}
		return nil
	})
	buildFloor := func() error {
		if err := warm(); err != nil {
			return err
		}
		return buildFloors()
	}
	for _, p := range []struct {
		pattern string
		floor   []string
		ic      bool // --ignore-case
	}{
		{`TODO|FIXME`, []string{"TODO", "FIXME"}, false},
		// Each letter either case, as toolkit looks for them.
		{`fatal.error`, []string{"-re", `(?i)fatal.error`, "-also", "[Ee][Rr][Rr][Oo][Rr]", "[Ff][Aa][Tt][Aa][Ll]"}, true},
		{`errors\.New\("[a-z]`, []string{"-re", `errors\.New\("[a-z]`, `errors.New("`}, false},
		{`func \w+Handler`, []string{"-re", `func \w+Handler`, "Handler"}, false},
		{`func.main`, []string{"-re", `func.main`, "main"}, false},
		// No literal: each matching line holds a lower-case letter before
		// two digits and a capital before a lower-case letter, as toolkit
		// works out from the pattern.
		{`[A-Z][a-z]+[0-9]{2,}`, []string{"-re", `[A-Z][a-z]+[0-9]{2,}`, "-also", "[A-Z][a-z]", "[a-z][0-9][0-9]"}, false},
	} {
		for _, f := range []struct{ bin, name string }{
			{floor, "the floor (bench/floor/grep)"},
			{floorDeps, "the floor linking toolkit's dependencies (bench/floor/grep, tag deps)"},
		} {
			tool, name := []string{tk, "grep", "--no-ignore", "--limit", "1000000"}, p.pattern
			if p.ic {
				tool, name = append(tool, "--ignore-case"), name+" (ignore case)"
			}
			out = append(out, comparison{
				group: "grep-rg", name: name + ", every match, against " + f.name + ", Go's source tree",
				base: append(append([]string{f.bin}, p.floor...), src),
				tool: append(tool, p.pattern, src),
				runs: e.runs, target: "report the ratio", peaks: true, setup: buildFloor,
			})
		}
	}
	out = append(out, comparison{
		group: "grep-rg", name: "TODO|FIXME, every match, against the floor linking all of toolkit's code besides (bench/floor/grep, tags deps and linked), Go's source tree",
		base: []string{floorLinked, "TODO", "FIXME", src},
		tool: []string{tk, "grep", "--no-ignore", "--limit", "1000000", `TODO|FIXME`, src},
		runs: e.runs, target: "report the ratio", peaks: true, setup: buildFloor,
	})
	out = append(out, comparison{
		group: "grep-rg", name: "fatal.error (ignore case), every match, against GNU grep -rniI",
		base: []string{"grep", "-rniI", `fatal.error`, src}, tool: []string{tk, "grep", "--no-ignore", "--ignore-case", "--limit", "1000000", `fatal.error`, src},
		runs: e.runs, target: "≤ 1.0×", limit: 1.0, setup: warm,
	})

	// Start-up: static Go programs built with install.sh's flags, each
	// side started 200 times in a loop.
	hello, shtrue, deps, linked, loop := e.path("hello"), e.path("shtrue"), e.path("deps"), e.path("linked"), e.path("loop")
	// build builds the loop, and the program in pkg as bin with the tags
	// given besides install.sh's, once: for the first of its rows.
	build := func(bin, pkg string, tags ...string) func() error {
		return sync.OnceValue(func() error {
			for _, b := range [][2]string{{loop, "./bench/startup/loop"}, {bin, pkg}} {
				cmd := exec.Command("go", "build", "-tags", strings.Join(append([]string{"urfave_cli_no_docs"}, tags...), ","), "-trimpath", "-ldflags", "-s -w", "-o", b[0], b[1])
				cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
				if out, err := cmd.CombinedOutput(); err != nil {
					return fmt.Errorf("%v: %s", err, out)
				}
			}
			return nil
		})
	}
	buildDeps, buildLinked := build(deps, "./bench/startup/deps"), build(linked, "./bench/startup/deps", "linked")
	starts := func(cmd ...string) []string { return append([]string{loop, "200"}, cmd...) }
	shellTrue := starts(tk, "shell", "true")
	out = append(out,
		comparison{
			group: "startup", name: "toolkit --version, 200 starts, against a static Go program that prints a line",
			base: starts(hello), tool: starts(tk, "--version"),
			runs: e.runs, target: "≤ 1.25×", limit: 1.25, setup: build(hello, "./bench/startup/hello"),
		},
		comparison{
			group: "startup", name: "toolkit --version, 200 starts, against that program linking every package toolkit's packages import (bench/startup/deps)",
			base: starts(deps), tool: starts(tk, "--version"),
			runs: e.runs, target: "≤ 1.05×", limit: 1.05, setup: buildDeps,
		},
		comparison{
			group: "startup", name: "toolkit --version, 200 starts, against bench/startup/deps built with the tag linked: all of toolkit's code linked, none of it run",
			base: starts(linked), tool: starts(tk, "--version"),
			runs: e.runs, target: "report the ratio", setup: buildLinked,
		},
		comparison{
			group: "startup", name: "toolkit shell true, 200 starts, against a static Go program that execs sh -c true",
			base: starts(shtrue), tool: shellTrue,
			runs: e.runs, target: "(the row below sets it)", setup: build(shtrue, "./bench/startup/shtrue"),
		},
		comparison{
			group: "startup", name: "toolkit shell true, 200 starts, against bench/startup/deps execing sh -c true",
			base: starts(deps, "sh"), tool: shellTrue,
			runs: e.runs, target: "≤ 1.3×", limit: 1.3, setup: buildDeps,
		},
		comparison{
			group: "startup", name: "toolkit shell true, 200 starts, against bench/startup/deps running sh -c true as a child (os/exec: start, wait), as toolkit must to say how it ended",
			base: starts(deps, "run"), tool: shellTrue,
			runs: e.runs, target: "report the ratio", setup: buildDeps,
		},
		comparison{
			group: "startup", name: "toolkit shell true, 200 starts, against bench/startup/deps built with the tag linked, running sh -c true as a child: what of a call is toolkit's own work",
			base: starts(linked, "run"), tool: shellTrue,
			runs: e.runs, target: "report the ratio", setup: buildLinked,
		},
		comparison{
			group: "startup", name: "toolkit shell true, 200 starts, against bench/startup/deps running sh -c true as toolkit shell must (guard: signals caught, a subreaper reaping, a session, its output read)",
			base: starts(deps, "guard"), tool: shellTrue,
			runs: e.runs, target: "report the ratio", setup: buildDeps,
		},
		comparison{
			group: "startup", name: "toolkit shell true, 200 starts, against that guard built with the tag linked: the floor of one binary of toolkit's size",
			base: starts(linked, "guard"), tool: shellTrue,
			runs: e.runs, target: "report the ratio", setup: buildLinked,
		},
		comparison{
			group: "startup", name: "toolkit shell true, 200 starts, against that guard doing first, by plain system calls, toolkit shell's work on its state (deps state: the journals listed, the spills' stamp, /proc/vmstat read), built with the tag linked",
			base: starts(linked, "state"), tool: shellTrue,
			runs: e.runs, target: "report the ratio", setup: buildLinked,
		},
		comparison{
			group: "startup", name: "toolkit shell true, 200 starts, against deps state parsing toolkit shell's command line first with the standard library's flag package (deps flag shell true: the same flags and environment variables), built with the tag linked",
			base: starts(linked, "flag", "shell", "true"), tool: shellTrue,
			runs: e.runs, target: "report the ratio", setup: buildLinked,
		},
		comparison{
			group: "startup", name: "toolkit shell true, 200 starts, against deps state parsing it first with urfave/cli's own flags, as its documentation writes them (deps cli shell true), built with the tag linked",
			base: starts(linked, "cli", "shell", "true"), tool: shellTrue,
			runs: e.runs, target: "report the ratio", setup: buildLinked,
		},
	)

	// History on a copy of Go's source tree made a git repository.
	tree := e.path("history-tree")
	nine := e.path("history-nine")
	makeTree := func() error {
		return gitRepo(tree, func() error { return exec.Command("cp", "-r", src, tree).Run() })
	}
	// A baseline kept, then nothing changed: without a keeper each call
	// walks the tree before and after its command; with one, it asks what
	// changed and walks nothing.
	bare := []string{tk, "shell", "--history", "undo", "--history-keeper=false", "--cwd", tree, "true"}
	kept := []string{tk, "shell", "--history", "undo", "--cwd", tree, "true"}
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
			group: "history", name: "change detection by a full scan (a shell call, no keeper), against git status --porcelain, nine copies of Go's source tree (about 100,000 files, hard links)",
			base: []string{"git", "-C", nine, "status", "--porcelain"},
			tool: []string{tk, "shell", "--history", "report", "--history-keeper=false", "--cwd", nine, "true"},
			runs: 3, target: "≤ 0.8× (two scans: before and after)", limit: 1.6,
			setup: func() error {
				err := gitRepo(nine, func() error {
					// Hard links where the file system allows them: no 1.7 GB copy.
					script := `mkdir -p "$1" && for i in 1 2 3 4 5 6 7 8 9; do cp -al "$0" "$1/$i" 2>/dev/null || cp -r "$0" "$1/$i" || exit; done`
					return exec.Command("sh", "-c", script, src, nine).Run()
				})
				if err != nil {
					return err
				}
				return exec.Command(tk, "shell", "--history", "report", "--history-keeper=false", "--cwd", nine, "true").Run()
			},
		},
		comparison{
			group: "history", name: "toolkit shell true with history on (its keeper watching), against it off, Go's source tree, the baseline kept",
			base: []string{tk, "shell", "--cwd", tree, "true"}, tool: kept,
			runs: e.runs, target: "≤ 1.3×", limit: 1.3,
			setup: func() error {
				if err := makeTree(); err != nil {
					return err
				}
				if err := exec.Command(kept[0], kept[1:]...).Run(); err != nil {
					return err
				}
				return watching(tk, tree)
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
			group: "history", name: "toolkit write of a 12-byte file in Go's source tree (its index 1.5 MB), history on with the baseline kept, against it off",
			base: []string{tk, "write", "--history", "off"}, tool: []string{tk, "write", "--history", "undo", "--history-keeper=false"},
			stdin: e.path("write.json"),
			runs:  4 * e.runs, target: "≤ 2 ms more than off (report: the difference of the medians)",
			setup: func() error {
				if err := makeTree(); err != nil {
					return err
				}
				call := `{"path": "` + filepath.Join(tree, "zz_written.txt") + `", "content": "hello world\n"}`
				if err := os.WriteFile(e.path("write.json"), []byte(call), 0o644); err != nil {
					return err
				}
				return exec.Command(bare[0], bare[1:]...).Run()
			},
			// Each run changes the file: what was written is put back first.
			before: func() error { return os.WriteFile(filepath.Join(tree, "zz_written.txt"), []byte("before\n"), 0o644) },
		},
		comparison{
			group: "history", name: "the first call on Go's source tree: the baseline captured in the call, against git add -A of a new index",
			base: []string{"sh", "-c", "cd " + tree + " && GIT_INDEX_FILE=" + e.path("bench-index") + " git add -A"},
			tool: []string{"sh", "-c", "rm -rf " + e.path("state-first") + " && TOOLKIT_STATE=" + e.path("state-first") + " " + tk + " shell --history undo --history-keeper=false --cwd " + tree + " true"},
			runs: 3, target: "toolkit ≤ 3 s", maxMS: 3000,
			setup: makeTree,
		},
	)
	return append(out, historyChanges(e)...)
}

// historyChanges are the rows of a call that changes many files: what the
// keeper and the store add to it, and an undo of it against git checkout.
// The tree is 1,000 files of 10 KB in a git repository; the call with
// history off runs on a copy of it, as the other's changes would be changes
// made outside its calls to the one.
func historyChanges(e *benchEnv) []comparison {
	tk := e.toolkit
	tree, off := e.path("undo-tree"), e.path("undo-tree-off")
	makeTree := func(tree string) error {
		return gitRepo(tree, func() error {
			line := strings.Repeat("0123456789abcdef ", 6) + "\n" // 103 bytes
			for i := range 1000 {
				p := filepath.Join(tree, fmt.Sprintf("d%d", i/100), fmt.Sprintf("f%03d.txt", i))
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					return err
				}
				if err := os.WriteFile(p, []byte(strings.Repeat(line, 100)), 0o644); err != nil {
					return err
				}
			}
			return nil
		})
	}
	rewrite := "sed -i 's/^0/x/' d*/f*.txt" // every line of every file
	// A new content each run: every line one byte longer.
	grow := func(history, tree string) []string {
		return []string{tk, "shell", "--history", history, "--cwd", tree, "sed -i 's/^/x/' d*/f*.txt"}
	}
	// toolkit's side of the undo row: the call that the before step made.
	callFile := e.path("undo-call")
	changeAll := func() error {
		out, err := exec.Command(tk, "shell", "--json", "--history", "undo", "--history-keeper=false", "--cwd", tree, rewrite).Output()
		if err != nil {
			return err
		}
		var o struct {
			Changes struct {
				Call  int64
				Files []struct{} `json:"files"`
			} `json:"changes"`
		}
		if err := json.Unmarshal(out, &o); err != nil || len(o.Changes.Files) != 1000 {
			return fmt.Errorf("the call that changes 1,000 files: %v, %d files", err, len(o.Changes.Files))
		}
		return os.WriteFile(callFile, fmt.Appendf(nil, "%d", o.Changes.Call), 0o644)
	}
	setup := func() error {
		if err := makeTree(tree); err != nil {
			return err
		}
		// The first call makes the tree's index and keeps its baseline.
		return exec.Command(tk, "shell", "--history", "undo", "--history-keeper=false", "--cwd", tree, "true").Run()
	}
	return []comparison{
		{
			group: "history", name: "a shell call that rewrites 1,000 files of 10 KB (sed -i), history on with the keeper watching, against it off",
			base: grow("off", off), tool: grow("undo", tree),
			runs: e.runs, target: "report: what finding and keeping 10 MB of new contents costs",
			setup: func() error {
				if err := makeTree(off); err != nil {
					return err
				}
				if err := setup(); err != nil {
					return err
				}
				if err := exec.Command(tk, "shell", "--history", "undo", "--cwd", tree, "true").Run(); err != nil {
					return err
				}
				return watching(tk, tree)
			},
		},
		{
			group: "history", name: "toolkit undo of a call that changed 1,000 files (10 MB), against git checkout -- . of the same files",
			base:   []string{"git", "-C", tree, "checkout", "-q", "--", "."},
			tool:   []string{"sh", "-c", tk + " undo --history-keeper=false --call $(cat " + callFile + ")"},
			before: changeAll,
			runs:   e.runs, target: "≤ 1.0×, toolkit ≤ 1 s", limit: 1.0, maxMS: 1000,
			setup: func() error {
				if err := exec.Command(tk, "job", "--stop-all").Run(); err != nil {
					return err
				}
				if err := exec.Command("git", "-C", tree, "reset", "-q", "--hard").Run(); err != nil {
					return err
				}
				return setup()
			},
		},
	}
}

// gitRepo makes dir a git repository of what fill puts in it, with one
// commit; a repository there already is taken as it is.
func gitRepo(dir string, fill func() error) error {
	if _, err := os.Stat(filepath.Join(dir, ".git")); err == nil {
		return nil
	}
	if err := fill(); err != nil {
		return err
	}
	script := `cd "$0" && git init -q && git add -A && git -c user.name=b -c user.email=b@b commit -qm base`
	return exec.Command("sh", "-c", script, dir).Run()
}

// watching waits until tree's history keeper watches it, then makes one
// call that asks it: the first call to ask walks the whole tree (its last
// whole walk is not known), and the rows measure the calls after it.
func watching(tk, tree string) error {
	for range 600 {
		out, err := exec.Command(tk, "job").Output()
		if err == nil && strings.Contains(string(out), ": watching "+tree) {
			return exec.Command(tk, "shell", "--history", "undo", "--cwd", tree, "true").Run()
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("no history keeper watches %s", tree)
}
