package patch

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"toolkit/internal/cmdline"
	"toolkit/internal/outcome"
	"toolkit/internal/replace"
	"toolkit/internal/root"
)

// The kill test runs this test binary as a patch: with TOOLKIT_PATCH_CHILD
// set, it applies the patch on stdin under the directory the variable
// names, prints the text or the error, and exits 0 or 1; with
// TOOLKIT_PATCH_KILL_AT=N too, it kills itself just before its Nth rename.
func TestMain(m *testing.M) {
	if dir := os.Getenv("TOOLKIT_PATCH_CHILD"); dir != "" {
		if at, err := strconv.Atoi(os.Getenv("TOOLKIT_PATCH_KILL_AT")); err == nil {
			n := 0
			replace.TestHookRename = func(string) {
				if n++; n == at {
					_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
				}
			}
		}
		r, err := root.Open(dir)
		if err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(1)
		}
		patch, _ := io.ReadAll(os.Stdin)
		// As the command line runs it: what a patch killed before left is
		// recovered first.
		o := replace.Recovered(replace.Recover(r), Run(context.Background(), Args{Patch: string(patch), Host: Options{Root: r}}))
		if o.Kind != outcome.Done {
			os.Stderr.WriteString(o.Message + "\n")
			os.Exit(1)
		}
		os.Stdout.WriteString(o.Text)
		os.Exit(0)
	}
	// The journals of this package's patches are its own.
	state, err := os.MkdirTemp("", "toolkit-patch-state-")
	if err != nil {
		panic(err)
	}
	os.Setenv("TOOLKIT_STATE", state)
	code := m.Run()
	os.RemoveAll(state)
	os.Exit(code)
}

// TestKillPatchAtRandomMoments kills a patch of 300 files (changes, adds,
// deletes) with SIGKILL, 100 times (under -race or -short, 8 times a patch
// of 100 files): every other
// round at a random moment, the others just before a rename chosen at random
// (so that every run kills some in the middle of the renames), then makes
// the next call. Each round, the tree is then all as it was or all as the
// patch makes it, with no file of toolkit's left beside them and no journal
// left; a kill in the middle of the renames is undone, and the next call
// says so.
func TestKillPatchAtRandomMoments(t *testing.T) {
	rounds, files := 100, 300
	if testing.Short() || raceBuild {
		rounds, files = 8, 100
	}
	t.Setenv("TOOLKIT_STATE", filepath.Join(t.TempDir(), "state"))
	dir := t.TempDir()
	old, new := map[string]string{}, map[string]string{}
	var patch strings.Builder
	patch.WriteString("*** Begin Patch\n")
	for i := range files {
		name := fmt.Sprintf("d%d/f%03d.txt", i%7, i)
		body := fmt.Sprintf("file %d\nline two\nline three\n", i)
		switch i % 10 {
		case 0: // deleted
			old[name] = body
			fmt.Fprintf(&patch, "*** Delete File: %s\n", name)
		case 1: // added
			new[name] = "new " + name + "\n"
			fmt.Fprintf(&patch, "*** Add File: %s\n+new %s\n", name, name)
		default:
			old[name], new[name] = body, strings.Replace(body, "two", "TWO", 1)
			fmt.Fprintf(&patch, "*** Update File: %s\n@@\n file %d\n-line two\n+line TWO\n", name, i)
		}
	}
	patch.WriteString("*** End Patch\n")
	reset := func() {
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
		for name, body := range old {
			p := filepath.Join(dir, name)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	var stderr strings.Builder
	start := func(killAt int) *exec.Cmd {
		stderr.Reset()
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), "TOOLKIT_PATCH_CHILD="+dir, "TOOLKIT_PATCH_KILL_AT="+strconv.Itoa(killAt))
		cmd.Stdin = strings.NewReader(patch.String())
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd
	}
	reset()
	began := time.Now()
	cmd := start(0)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("a whole patch failed: %v %s", err, stderr.String())
	}
	whole := time.Since(began)
	if got := tree(t, dir); !sameFiles(got, new) {
		t.Fatalf("a whole patch made %d files, not the %d it makes", len(got), len(new))
	}

	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
	var tally struct{ old, new, recovered int }
	for round := range rounds {
		reset()
		killAt := 0
		if round%2 == 1 {
			killAt = 2 + rng.IntN(len(old)-2) // after one rename at least, before the last
		}
		cmd := start(killAt)
		if killAt == 0 {
			time.Sleep(time.Duration(rng.Int64N(2*int64(whole) + 1)))
			_ = cmd.Process.Signal(syscall.SIGKILL)
		}
		_ = cmd.Wait()
		// The next call, as a host makes it: a patch of another file.
		o := call(t, dir, "*** Begin Patch\n*** Add File: other.txt\n+x\n*** End Patch\n")
		if o.Kind != outcome.Done {
			t.Fatalf("round %d: the next call failed: %s", round, o.Message)
		}
		if strings.Contains(o.Text, "[recovered:") {
			tally.recovered++
		} else if killAt > 0 {
			t.Fatalf("round %d: killed before rename %d, and the next call said no recovery: %q", round, killAt, o.Text)
		}
		if strings.Contains(o.Text, "[not recovered") {
			t.Fatalf("round %d: %s", round, o.Text)
		}
		os.Remove(filepath.Join(dir, "other.txt"))
		got := tree(t, dir)
		switch {
		case sameFiles(got, old):
			tally.old++
		case sameFiles(got, new):
			tally.new++
		default:
			for name := range got {
				if _, ok := old[name]; !ok {
					if _, ok := new[name]; !ok {
						t.Logf("not toolkit's: %s", name)
					}
				}
			}
			t.Fatalf("round %d: the tree is neither as it was nor as the patch makes it (%d files; the next call said %q)", round, len(got), o.Text)
		}
		journals, _ := filepath.Glob(filepath.Join(os.Getenv("TOOLKIT_STATE"), "journals", "*"))
		if len(journals) > 0 {
			t.Fatalf("round %d: journals left: %v", round, journals)
		}
	}
	t.Logf("%d kills during a %v patch of %d files: all old %d, all new %d; the next call recovered %d",
		rounds, whole.Round(time.Millisecond), files, tally.old, tally.new, tally.recovered)
}

// sameFiles reports whether tree (as tree gives it: mode, then bytes) has
// exactly the files of want, with their contents.
func sameFiles(tree, want map[string]string) bool {
	if len(tree) != len(want) {
		return false
	}
	for name, body := range want {
		got, ok := tree[name]
		if !ok || !strings.HasSuffix(got, " "+body) || strings.Contains(name, ".toolkit-") {
			return false
		}
	}
	return true
}

// call runs a patch as a host's call does, through the applet's one entry
// point, which recovers what a killed patch left first.
func call(t *testing.T, dir, patch string) outcome.Outcome {
	t.Helper()
	r, err := root.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	in, _ := json.Marshal(map[string]string{"patch": patch})
	return Applet.Call(context.Background(), in, cmdline.Host{Root: r})
}
