package history

import (
	"context"
	"crypto/sha256"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"toolkit/internal/outcome"
	"toolkit/internal/replace"
)

// The kill test runs this test binary as a toolkit doing one thing of
// history's: with TOOLKIT_HISTORY_CHILD set to "change TREE SEED", a call
// that rewrites, adds and removes files; "undo N", an undo of call N;
// "first TREE", the first call on a tree, which captures its baseline.
func TestMain(m *testing.M) {
	if op := os.Getenv("TOOLKIT_HISTORY_CHILD"); op != "" {
		os.Exit(child(strings.Fields(op)))
	}
	if len(os.Args) == 4 && os.Args[1] == KeeperName {
		// A keeper a call started: this test binary is its toolkit.
		os.Exit(RunKeeper(os.Args[2], os.Args[3]))
	}
	os.Exit(m.Run())
}

func child(op []string) int {
	ctx := context.Background()
	s := settings()
	switch op[0] {
	case "change":
		seed, _ := strconv.Atoi(op[2])
		c, err := Begin(ctx, "shell", op[1], true, s)
		if err != nil {
			return 1
		}
		mutate(op[1], uint64(seed))
		if _, err := c.End(ctx, nil); err != nil {
			return 1
		}
	case "said":
		// A write, edit or patch: what it wrote said, not scanned.
		seed, _ := strconv.Atoi(op[2])
		began := time.Now()
		var wrote []outcome.Wrote
		for i := range 3 {
			p := filepath.Join(op[1], fmt.Sprintf("d%d/said%d.txt", i, seed%5))
			before, err := os.ReadFile(p)
			after := []byte(fmt.Sprintf("said %d\n", seed))
			os.MkdirAll(filepath.Dir(p), 0o755)
			if os.WriteFile(p, after, 0o644) != nil {
				return 1
			}
			wrote = append(wrote, outcome.Wrote{Path: p, Before: before, Existed: err == nil, After: after, Exists: true})
		}
		if _, err := Said(ctx, "write", op[1], s, began, wrote); err != nil {
			return 1
		}
	case "undo":
		n, _ := strconv.ParseInt(op[1], 10, 64)
		if at, _ := strconv.Atoi(op[2]); at > 0 {
			// Killed just before its at-th rename: in the middle of the
			// commit, which its journal must undo.
			k := 0
			replace.TestHookRename = func(string) {
				if k++; k == at {
					_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
				}
			}
		}
		if _, _, err := UndoCalls(ctx, UndoArgs{Call: n, Force: true}, s); err != nil {
			return 1
		}
	case "first":
		c, err := Begin(ctx, "shell", op[1], true, s)
		if err != nil {
			return 1
		}
		if _, err := c.End(ctx, nil); err != nil {
			return 1
		}
	}
	return 0
}

// mutate rewrites some of a tree's 40 files, removes some, adds some,
// makes, retargets or removes some of its 8 links, and makes each of 4
// paths nothing, a file, a directory with a file, or a link to a
// directory of the tree (an undo that went through it would write there).
func mutate(tree string, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 9))
	for i := range 40 {
		p := filepath.Join(tree, fmt.Sprintf("d%d/f%02d.txt", i%4, i))
		switch rng.IntN(4) {
		case 0:
			os.Remove(p)
		case 1, 2:
			os.MkdirAll(filepath.Dir(p), 0o755)
			os.WriteFile(p, []byte(strings.Repeat(fmt.Sprintf("line %d %d\n", i, rng.IntN(1000)), 1+rng.IntN(200))), 0o644)
		}
	}
	for i := range 8 {
		p := filepath.Join(tree, fmt.Sprintf("d%d/l%d", i%4, i))
		switch rng.IntN(3) {
		case 0:
			os.Remove(p)
		case 1:
			os.MkdirAll(filepath.Dir(p), 0o755)
			os.Remove(p)
			os.Symlink(fmt.Sprintf("f%02d.txt", rng.IntN(40)), p)
		}
	}
	for i := range 4 {
		p := filepath.Join(tree, fmt.Sprintf("d%d/k%d", i, i))
		kind := rng.IntN(5)
		if kind < 4 {
			os.MkdirAll(filepath.Dir(p), 0o755)
			os.RemoveAll(p)
		}
		switch kind {
		case 1:
			os.WriteFile(p, []byte(fmt.Sprintf("k %d\n", rng.IntN(1000))), 0o644)
		case 2:
			os.MkdirAll(p, 0o755)
			os.WriteFile(filepath.Join(p, "inner"), []byte(fmt.Sprintf("inner %d\n", rng.IntN(1000))), 0o644)
		case 3:
			os.Symlink("../d0", p)
		}
	}
}

// snapshot is a tree's files, each its permissions and its content after
// a "=" (an empty file, a write killed before its first byte, is not an
// absent one; over 1 KiB its size and sha256), its links' targets, each after a "->", and its
// directories, each a "/" and its permissions: type, mode and bytes.
func snapshot(t *testing.T, tree string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(tree, func(p string, d os.DirEntry, err error) error {
		rel, _ := filepath.Rel(tree, p)
		switch {
		case err != nil:
		case d.Type().IsRegular():
			b, _ := os.ReadFile(p)
			mode := "?"
			if fi, err := d.Info(); err == nil {
				mode = fmt.Sprintf("%o", fi.Mode().Perm())
			}
			if len(b) > 1<<10 {
				b = fmt.Appendf(nil, "%d bytes, sha256 %x", len(b), sha256.Sum256(b))
			}
			out[rel] = mode + "=" + string(b)
		case d.Type()&os.ModeSymlink != 0:
			dest, _ := os.Readlink(p)
			out[rel] = "->" + dest
		case d.IsDir():
			if fi, err := d.Info(); err == nil {
				out[rel] = fmt.Sprintf("/%o", fi.Mode().Perm())
			}
		}
		return nil
	})
	return out
}

// TestKillAtRandomMoments kills calls (scanned, and said as write, edit
// and patch say theirs), undos and first calls (their baselines) with SIGKILL at random moments, 100 times (8 under -short,
// two of each kind), and after each, once what was left is recovered as
// the next call recovers it: every content a finished call kept reads
// back, an undo is all done or not begun, and no temporary file is left.
func TestKillAtRandomMoments(t *testing.T) {
	rounds := 100
	if testing.Short() {
		rounds = 8
	}
	state := filepath.Join(t.TempDir(), "state")
	t.Setenv("TOOLKIT_STATE", state)
	base := t.TempDir()
	tree := filepath.Join(base, "tree")
	mutate(tree, 1)
	run := func(op string, killAfter time.Duration) {
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), "TOOLKIT_HISTORY_CHILD="+op)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		if killAfter > 0 {
			time.Sleep(killAfter)
			_ = cmd.Process.Signal(syscall.SIGKILL)
		}
		_ = cmd.Wait()
	}
	run("first "+tree, 0)
	// A whole call, never killed: how long one takes here (under -race, on
	// a loaded machine, many times longer), and a call to undo from the
	// first round on.
	began := time.Now()
	run(fmt.Sprintf("change %s %d", tree, -1), 0)
	whole := time.Since(began)
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 3))
	var tally struct{ changes, undos, firsts, undoneWhole, undoneNot int }
	for round := range rounds {
		kill := time.Duration(1 + rng.Int64N(int64(2*whole))) // within two whole calls
		// Every kind, every time; the moments at random.
		switch round % 4 {
		case 0:
			tally.changes++
			run(fmt.Sprintf("change %s %d", tree, round), kill)
		case 1:
			tally.changes++
			run(fmt.Sprintf("said %s %d", tree, round), kill)
		case 2:
			tally.firsts++
			other := filepath.Join(base, fmt.Sprintf("first%d", round))
			mutate(other, uint64(round))
			run("first "+other, kill)
		case 3:
			n := lastChange(t, tree)
			if n == 0 {
				t.Logf("round %d: no call to undo yet", round)
				continue
			}
			tally.undos++
			plan, _, err := UndoCalls(context.Background(), UndoArgs{Call: n, Force: true, DryRun: true}, settings())
			if err != nil {
				t.Fatal(err)
			}
			before := snapshot(t, tree)
			at := 0
			if (round/4)%2 == 0 && len(plan.Restored) > 1 { // every other undo
				at, kill = 2+rng.IntN(len(plan.Restored)-1), 0 // after one rename at least
			}
			run(fmt.Sprintf("undo %d %d", n, at), kill)
			replace.Recover(nil) // as the next call does
			after := snapshot(t, tree)
			changed := 0
			var same []string
			for _, st := range plan.Restored {
				if before[st.Path] != after[st.Path] {
					changed++
				} else {
					same = append(same, fmt.Sprintf("%+v", st))
				}
			}
			switch changed {
			case 0:
				tally.undoneNot++
			case len(plan.Restored):
				tally.undoneWhole++
			default:
				t.Fatalf("round %d: an undo of call %d killed after %v left %d of its %d files changed; unchanged: %v", round, n, kill, changed, len(plan.Restored), same)
			}
		}
		replace.Recover(nil)
		checkKept(t, round)
		checkStray(t, round, tree, state)
	}
	if tally.undos == 0 {
		t.Errorf("no undo was tried: no call on the tree changed anything")
	}
	t.Logf("%d calls, %d first calls, %d undos (%d whole, %d not begun) killed at random moments", tally.changes, tally.firsts, tally.undos, tally.undoneWhole, tally.undoneNot)
}

// lastChange is the last finished call on tree that changed something and
// is not an undo.
func lastChange(t *testing.T, tree string) int64 {
	h, err := open(settings())
	if err != nil {
		t.Fatal(err)
	}
	defer h.close()
	byN, order, _ := h.calls()
	for _, n := range slices.Backward(order) {
		if c := byN[n]; c.tree == tree && c.ended && c.hasFiles && c.tool != "undo" {
			return n
		}
	}
	return 0
}

// checkKept: every content a finished call says is kept reads back.
func checkKept(t *testing.T, round int) {
	h, err := open(settings())
	if err != nil {
		t.Fatal(err)
	}
	defer h.close()
	byN, _, err := h.calls()
	if err != nil {
		t.Fatal(err)
	}
	for n, c := range byN {
		if !c.ended {
			continue
		}
		for _, f := range c.files() {
			for _, kept := range []struct {
				sum string
				ok  bool
			}{{f.Pre, f.PreKept}, {f.Post, f.PostKept}} {
				if kept.ok {
					if _, ok := h.content(kept.sum, false); !ok {
						t.Fatalf("round %d: call %d's %s content of %s is lost", round, n, kept.sum[:12], f.Path)
					}
				}
			}
		}
	}
}

// checkStray: no temporary file of toolkit's is left, in the tree or in
// the history, once the next toolkit has opened it (its first open, as
// this process's is made again).
func checkStray(t *testing.T, round int, tree, state string) {
	swept = sync.Once{}
	h, err := open(settings())
	if err != nil {
		t.Fatal(err)
	}
	h.close()
	for _, dir := range []string{tree, state} {
		filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err == nil && (strings.HasSuffix(p, ".tmp") || strings.Contains(d.Name(), ".toolkit-")) {
				t.Fatalf("round %d: %s left", round, p)
			}
			return nil
		})
	}
}
