package history

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"toolkit/internal/history/log"
	"toolkit/internal/outcome"
)

// BenchmarkCall: a scanned call that changes nothing, on the tree
// TOOLKIT_BENCH_TREE (Go's source tree, say), with a keeper and without.
func BenchmarkCall(b *testing.B) {
	tree := os.Getenv("TOOLKIT_BENCH_TREE")
	if tree == "" {
		b.Skip("TOOLKIT_BENCH_TREE names no tree")
	}
	for _, keeper := range []bool{true, false} {
		b.Run(map[bool]string{true: "keeper", false: "scan"}[keeper], func(b *testing.B) {
			s := Defaults
			s.Keeper = keeper
			b.Setenv("TOOLKIT_STATE", filepath.Join(b.TempDir(), "state"))
			call := func() {
				c, err := Begin(context.Background(), "shell", tree, true, s)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := c.End(context.Background(), nil); err != nil {
					b.Fatal(err)
				}
			}
			call()
			if keeper {
				b.Cleanup(func() { stopKeeper(b, tree) })
				waitKeeper(b, tree, s)
				call()
			}
			b.ResetTimer()
			for b.Loop() {
				call()
			}
		})
	}
}

// thousandFiles is a tree of 1,000 files of 10 KB, its history begun with
// no keeper, and a change that puts prefix before each file's content.
func thousandFiles(b *testing.B) (dir string, s Settings, rewrite func(prefix string)) {
	files := map[string]string{}
	for i := range 1000 {
		files[fmt.Sprintf("d%d/f%03d.txt", i/100, i)] = strings.Repeat("0123456789abcdef 0123456789abcdef 0123456789abcdef\n", 200)
	}
	s = Defaults
	s.Keeper = false
	dir = newTreeWith(b, files, s)
	return dir, s, func(prefix string) {
		for name := range files {
			p := filepath.Join(dir, name)
			data, _ := os.ReadFile(p)
			if err := os.WriteFile(p, append([]byte(prefix), data...), 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkUndo: the undo of a call that changed 1,000 files of 10 KB.
func BenchmarkUndo(b *testing.B) {
	dir, s, rewrite := thousandFiles(b)
	for b.Loop() {
		b.StopTimer()
		ch := callWith(b, dir, s, func() { rewrite("x") })
		b.StartTimer()
		if _, _, err := UndoCalls(context.Background(), UndoArgs{Call: ch.Call}, s); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSaid: a call that says it wrote one small file (write, edit,
// patch) on the tree TOOLKIT_BENCH_TREE, its baseline kept.
func BenchmarkSaid(b *testing.B) {
	tree := os.Getenv("TOOLKIT_BENCH_TREE")
	if tree == "" {
		b.Skip("TOOLKIT_BENCH_TREE names no tree")
	}
	s := Defaults
	s.Keeper = false
	b.Setenv("TOOLKIT_STATE", filepath.Join(b.TempDir(), "state"))
	p := filepath.Join(tree, "zz_said.txt")
	b.Cleanup(func() { os.Remove(p) })
	before, existed := []byte(nil), false
	c, err := Begin(context.Background(), "shell", tree, true, s)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := c.End(context.Background(), nil); err != nil { // the index and the baseline
		b.Fatal(err)
	}
	i := 0
	for b.Loop() {
		i++
		began := time.Now()
		after := []byte(fmt.Sprintf("said %d\n", i))
		if err := os.WriteFile(p, after, 0o644); err != nil {
			b.Fatal(err)
		}
		wrote := []outcome.Wrote{{Path: p, Before: before, Existed: existed, After: after, Exists: true}}
		before, existed = after, true
		if _, err := Said(context.Background(), "write", tree, s, began, wrote); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkChanges: a scanned call that finds 1,000 files of 10 KB
// changed: with undo, it keeps their new contents; with report, it hashes
// them and counts their lines. The rewrite itself is not timed.
func BenchmarkChanges(b *testing.B) {
	for _, mode := range []Mode{Undo, Report} {
		b.Run(string(mode), func(b *testing.B) {
			dir, s, rewrite := thousandFiles(b)
			s.Mode = mode
			n := 0
			for b.Loop() {
				n++
				callWith(b, dir, s, func() {
					b.StopTimer()
					rewrite(fmt.Sprint(n))
					b.StartTimer()
				})
			}
		})
	}
}

// BenchmarkLog: a page of history (the newest call) out of a log of 40
// calls that changed 1,000 files each, about 10 MB: the pages' calls are
// decoded, not the log.
func BenchmarkLog(b *testing.B) {
	b.Setenv("TOOLKIT_STATE", filepath.Join(b.TempDir(), "state"))
	h, err := open(settings())
	if err != nil {
		b.Fatal(err)
	}
	at := time.Now()
	files := make([]log.File, 1000)
	for i := range files {
		files[i] = log.File{Path: fmt.Sprintf("d%d/f%03d.txt", i/100, i), Status: "M", Pre: strings.Repeat("a", 64), Post: strings.Repeat("b", 64), PreKept: true, PostKept: true}
	}
	for n := range int64(40) {
		if log.Append(h.dir, log.Record{Call: n + 1, Tree: "/t", Tool: "shell", Begin: &at}) != nil || log.Append(h.dir, log.Record{Call: n + 1, End: &at, Files: files}) != nil {
			b.Fatal("cannot append")
		}
	}
	h.close()
	for b.Loop() {
		if calls, _, err := List(false, 0, 1); err != nil || len(calls) != 1 {
			b.Fatal(err)
		}
	}
}
