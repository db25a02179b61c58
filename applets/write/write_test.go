package write

import (
	"bytes"
	"context"
	"crypto/sha256"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"toolkit/internal/outcome"
)

// The kill test runs this test binary as a writer: with TOOLKIT_WRITE_CHILD
// set, it writes stdin to the path the variable names, and exits.
func TestMain(m *testing.M) {
	if path := os.Getenv("TOOLKIT_WRITE_CHILD"); path != "" {
		o := Run(context.Background(), Args{Path: path, Host: Options{Content: os.Stdin}})
		if o.Kind != outcome.Done {
			os.Stderr.WriteString(o.Message + "\n")
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func temps(t *testing.T, dir string) []string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, ".*.toolkit-*.tmp"))
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// TestKillAtRandomMoments kills a write of 32 MiB with SIGKILL at random
// moments, 200 times (20 under -race or -short), and checks that the file is always exactly the old
// content or the new one.
func TestKillAtRandomMoments(t *testing.T) {
	runs := 200
	if testing.Short() || raceBuild {
		runs = 20
	}
	dir := t.TempDir()
	target := filepath.Join(dir, "big.bin")
	oldContent := bytes.Repeat([]byte("old content, 32 bytes a line...\n"), 1<<20)
	newContent := bytes.Repeat([]byte("NEW CONTENT, 32 bytes a line!!!\n"), 1<<20)
	oldSum, newSum := sha256.Sum256(oldContent), sha256.Sum256(newContent)
	src := filepath.Join(t.TempDir(), "new.bin")
	if err := os.WriteFile(src, newContent, 0o644); err != nil {
		t.Fatal(err)
	}
	write := func() *exec.Cmd {
		in, err := os.Open(src)
		if err != nil {
			t.Fatal(err)
		}
		defer in.Close()
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), "TOOLKIT_WRITE_CHILD="+target)
		cmd.Stdin = in
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd
	}
	reset := func() {
		if err := os.WriteFile(target, oldContent, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, n := range temps(t, dir) {
			os.Remove(n)
		}
	}
	// One whole write, to know how long one takes.
	reset()
	start := time.Now()
	if err := write().Wait(); err != nil {
		t.Fatalf("a whole write failed: %v", err)
	}
	whole := time.Since(start)

	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 9))
	var tally struct{ old, new, other, leftTemp int }
	for range runs {
		reset()
		cmd := write()
		// Up to twice a whole write: a write under load takes longer than
		// the one measured, and kills after the rename count too.
		time.Sleep(time.Duration(rng.Int64N(2*int64(whole) + 1)))
		_ = cmd.Process.Signal(syscall.SIGKILL)
		_ = cmd.Wait()
		got, err := os.ReadFile(target)
		if err != nil {
			t.Fatalf("after a kill: %v", err)
		}
		switch sha256.Sum256(got) {
		case oldSum:
			tally.old++
		case newSum:
			tally.new++
		default:
			tally.other++
		}
		if len(temps(t, dir)) > 0 {
			tally.leftTemp++
		}
	}
	t.Logf("%d kills during a %v write: old %d, new %d, other %d (a temporary file was left %d times)",
		runs, whole.Round(time.Millisecond), tally.old, tally.new, tally.other, tally.leftTemp)
	if tally.other != 0 {
		t.Fatalf("%d times the file was neither the old nor the new content", tally.other)
	}
	if tally.old == 0 || tally.new == 0 {
		t.Logf("warning: every kill came %s the rename", map[bool]string{true: "before", false: "after"}[tally.new == 0])
	}
}

// mountTmpfs mounts a tmpfs of the given size on a new directory, as root.
func mountTmpfs(t *testing.T, size string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("skipped: mounting a tmpfs needs root, and this test does not run as root")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("skipped: cannot mount a tmpfs here: %v: %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", dir).Run() })
	return dir
}

// TestDiskFull: on a full 1 MiB tmpfs the write is a tool error naming the
// path and the reason, the old content stays, and no temporary file is left.
func TestDiskFull(t *testing.T) {
	dir := mountTmpfs(t, "1m")
	path := filepath.Join(dir, "f.txt")
	old := bytes.Repeat([]byte("o"), 600<<10)
	if err := os.WriteFile(path, old, 0o644); err != nil {
		t.Fatal(err)
	}
	o := Run(t.Context(), Args{Path: path, Content: strings.Repeat("n", 2<<20)})
	if o.Kind != outcome.ToolError || o.Message != path+": cannot write: no space left on device" {
		t.Fatalf("got %+v", o)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, old) {
		t.Fatal("the old content changed")
	}
	if left := temps(t, dir); len(left) > 0 {
		t.Fatalf("temporary files left: %v", left)
	}
}

// TestReadOnly: a read-only file system is a tool error naming the reason.
func TestReadOnly(t *testing.T) {
	dir := mountTmpfs(t, "1m")
	path := filepath.Join(dir, "f.txt")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-o", "remount,ro", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot remount read-only: %v: %s", err, out)
	}
	o := Run(t.Context(), Args{Path: path, Content: "new"})
	if o.Kind != outcome.ToolError || o.Message != path+": cannot write: read-only file system" {
		t.Fatalf("got %+v", o)
	}
	if got, _ := os.ReadFile(path); string(got) != "old" {
		t.Fatal("the old content changed")
	}
}

// TestNoPermission: a directory toolkit may not write in.
func TestNoPermission(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("skipped: root may write anywhere, and this test runs as root")
	}
	dir := filepath.Join(t.TempDir(), "locked")
	if err := os.Mkdir(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "f.txt")
	o := Run(t.Context(), Args{Path: path, Content: "x"})
	if o.Kind != outcome.ToolError || o.Message != path+": cannot write: permission denied" {
		t.Fatalf("got %+v", o)
	}
}

// TestOwnerKept: as root, the new file gets the old file's owner and group.
func TestOwnerKept(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("skipped: only root may give a file another owner")
	}
	path := filepath.Join(t.TempDir(), "f.txt")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(path, 1234, 5678); err != nil {
		t.Fatal(err)
	}
	o := Run(t.Context(), Args{Path: path, Content: "new"})
	if d := o.Details.(Details); o.Kind != outcome.Done || d.OwnerKept == nil || !*d.OwnerKept {
		t.Fatalf("got %+v", o)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st := fi.Sys().(*syscall.Stat_t); st.Uid != 1234 || st.Gid != 5678 {
		t.Fatalf("owner %d:%d, want 1234:5678", st.Uid, st.Gid)
	}
}
