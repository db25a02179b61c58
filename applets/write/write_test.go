package write

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"toolkit/internal/outcome"
)

// The kill test and the tests as another user run this test binary as a
// writer: with TOOLKIT_WRITE_CHILD set, it writes stdin to the path the
// variable names, prints the text or the error, and exits 0 or 1.
func TestMain(m *testing.M) {
	if path := os.Getenv("TOOLKIT_WRITE_CHILD"); path != "" {
		o := Run(context.Background(), Args{Path: path, Host: Options{Content: os.Stdin}})
		if o.Kind != outcome.Done {
			os.Stderr.WriteString(o.Message + "\n")
			os.Exit(1)
		}
		os.Stdout.WriteString(o.Text)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// asNobody runs this test binary as the writer of path, as the user nobody
// (65534), with content on stdin, and returns what it printed and whether it
// wrote. It skips unless the test runs as root.
func asNobody(t *testing.T, path, content string, env ...string) (string, bool) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("skipped: running as another user needs root")
	}
	// A copy of the test binary that nobody may run.
	dir, err := os.MkdirTemp("", "toolkit-write-nobody-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	exe := filepath.Join(dir, "write.test")
	b, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(exe, b, 0o755); err != nil || os.Chmod(dir, 0o755) != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(append(os.Environ(), "TOOLKIT_WRITE_CHILD="+path), env...)
	cmd.Stdin = strings.NewReader(content)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatal(err)
	}
	return string(out), err == nil
}

// world makes a directory that everyone may enter, as root; t.TempDir's
// are the test user's alone.
func world(t *testing.T, mode os.FileMode) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "toolkit-write-world-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, mode); err != nil {
		t.Fatal(err)
	}
	return dir
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
// moments, 200 times (under -race or -short, 8 times a write of 4 MiB),
// and checks that the file is always exactly the old content or the new
// one.
func TestKillAtRandomMoments(t *testing.T) {
	runs, lines := 200, 1<<20
	if testing.Short() || raceBuild {
		runs, lines = 8, 1<<17
	}
	dir := t.TempDir()
	target := filepath.Join(dir, "big.bin")
	oldContent := bytes.Repeat([]byte("old content, 32 bytes a line...\n"), lines)
	newContent := bytes.Repeat([]byte("NEW CONTENT, 32 bytes a line!!!\n"), lines)
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
	o := Run(t.Context(), Args{Path: path, Content: bytes.Repeat([]byte("n"), 2<<20)})
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
	o := Run(t.Context(), Args{Path: path, Content: []byte("new")})
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
	o := Run(t.Context(), Args{Path: path, Content: []byte("x")})
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
	o := Run(t.Context(), Args{Path: path, Content: []byte("new")})
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

// TestIfMatchRaces: writers with the same if_match start at once, 200
// times: exactly one wins each time, and the others are told the file
// changed. The same for "absent": exactly one creates the file.
func TestIfMatchRaces(t *testing.T) {
	const races, writers = 200, 3
	dir := t.TempDir()
	for _, kind := range []string{"sha256", "absent"} {
		wins := map[int]int{}
		for i := range races {
			path := filepath.Join(dir, kind+strconv.Itoa(i))
			match := "absent"
			if kind == "sha256" {
				if err := os.WriteFile(path, []byte("old\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				sum := sha256.Sum256([]byte("old\n"))
				match = hex.EncodeToString(sum[:])[:12] // a prefix will do
			}
			var wg sync.WaitGroup
			won := make(chan string, writers)
			start := make(chan struct{})
			for w := range writers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					content := "writer " + strconv.Itoa(w) + "\n"
					o := Run(t.Context(), Args{Path: path, Content: []byte(content), IfMatch: &match})
					switch {
					case o.Kind == outcome.Done:
						won <- content
					case !strings.Contains(o.Message, "changed since it was read"):
						t.Errorf("%s race %d: %q", kind, i, o.Message)
					}
				}()
			}
			close(start)
			wg.Wait()
			close(won)
			n := 0
			for content := range won {
				n++
				if got, _ := os.ReadFile(path); string(got) != content {
					t.Fatalf("%s race %d: the winner wrote %q, the file holds %q", kind, i, content, got)
				}
			}
			wins[n]++
		}
		if wins[1] != races {
			t.Fatalf("%s: winners per race %v, want exactly one in each of %d", kind, wins, races)
		}
	}
}

// TestLinkInLinkedDirectory: a link inside a directory reached through a
// link is followed from where it really is, as the kernel and read do.
func TestLinkInLinkedDirectory(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "sub", "deeper"), 0o755); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{"d": "sub/deeper", "sub/deeper/link": "../x"} {
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	o := Run(t.Context(), Args{Path: filepath.Join(dir, "d", "link"), Content: []byte("through\n")})
	if o.Kind != outcome.Done {
		t.Fatal(o.Message)
	}
	if got, err := os.ReadFile(filepath.Join(dir, "sub", "x")); err != nil || string(got) != "through\n" {
		t.Fatalf("sub/x holds %q, %v; the text: %q", got, err, o.Text)
	}
	if _, err := os.Stat(filepath.Join(dir, "x")); err == nil {
		t.Fatal("./x was written")
	}
}

// TestSetuidKept: the mode survives exactly, setuid bit included, when the
// owner is given back (chown clears it; chmod comes after).
func TestSetuidKept(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("skipped: only root may give a file another owner")
	}
	path := filepath.Join(t.TempDir(), "tool")
	if err := os.WriteFile(path, []byte("old"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(path, 1234, 5678); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o755|os.ModeSetuid|os.ModeSetgid); err != nil {
		t.Fatal(err)
	}
	if o := Run(t.Context(), Args{Path: path, Content: []byte("new")}); o.Kind != outcome.Done {
		t.Fatal(o.Message)
	}
	fi, _ := os.Stat(path)
	if fi.Mode() != 0o755|os.ModeSetuid|os.ModeSetgid {
		t.Fatalf("mode %v, want %v", fi.Mode(), 0o755|os.ModeSetuid|os.ModeSetgid)
	}
}

// TestOwnerNotKeptIsSaid: a writer that may not give the file its owner
// back says so in the text.
func TestOwnerNotKeptIsSaid(t *testing.T) {
	dir := world(t, 0o777)
	path := filepath.Join(dir, "f.txt")
	if err := os.WriteFile(path, []byte("old"), 0o666); err != nil || os.Chmod(path, 0o666) != nil {
		t.Fatal(err)
	}
	out, ok := asNobody(t, path, "new")
	if !ok || !strings.Contains(out, "[the owner could not be kept: it was uid 0, gid 0; the file is toolkit's user's now]") {
		t.Fatalf("ok %v: %q", ok, out)
	}
}

// TestInPlaceWhenTheDirectoryRefuses: a file toolkit may write, in a
// directory it may not, is written in place and the text says so; a new
// file there is an error naming the directory.
func TestInPlaceWhenTheDirectoryRefuses(t *testing.T) {
	dir := world(t, 0o755)
	path := filepath.Join(dir, "f.txt")
	if err := os.WriteFile(path, []byte("old content\n"), 0o666); err != nil || os.Chmod(path, 0o666) != nil {
		t.Fatal(err)
	}
	out, ok := asNobody(t, path, "new\n")
	if !ok || !strings.Contains(out, "[written in place: the directory "+dir+" takes no new file; not atomic]") {
		t.Fatalf("ok %v: %q", ok, out)
	}
	if got, _ := os.ReadFile(path); string(got) != "new\n" {
		t.Fatalf("the file holds %q", got)
	}
	out, ok = asNobody(t, filepath.Join(dir, "new.txt"), "x")
	if ok || !strings.Contains(out, ": cannot create a file in the directory "+dir+": permission denied") {
		t.Fatalf("a new file: ok %v: %q", ok, out)
	}
	// Written in place, the content waits in $TMPDIR first: when that
	// cannot be used, the error names it, not the file (which is there).
	out, ok = asNobody(t, path, "newer\n", "TMPDIR="+filepath.Join(dir, "no-such-tmp"))
	if ok || !strings.Contains(out, "f.txt: cannot create a file in the directory "+filepath.Join(dir, "no-such-tmp")+": no such file or directory") {
		t.Fatalf("a TMPDIR that is not there: ok %v: %q", ok, out)
	}
}

// TestInPlaceOnAMountPoint: a file bind-mounted over another (a
// container's /etc/hosts) cannot be renamed over: it is written in place.
func TestInPlaceOnAMountPoint(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("skipped: mounting needs root")
	}
	dir := t.TempDir()
	src, target := filepath.Join(dir, "src"), filepath.Join(dir, "hosts")
	for _, p := range []string{src, target} {
		if err := os.WriteFile(p, []byte("127.0.0.1 localhost\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := exec.Command("mount", "--bind", src, target).CombinedOutput(); err != nil {
		t.Skipf("skipped: cannot bind-mount here: %v: %s", err, out)
	}
	defer exec.Command("umount", target).Run()
	o := Run(t.Context(), Args{Path: target, Content: []byte("10.0.0.1 box\n")})
	if o.Kind != outcome.Done || !strings.Contains(o.Text, "[written in place: "+target+" is a mount point; not atomic]") {
		t.Fatalf("got %v %q %q", o.Kind, o.Text, o.Message)
	}
	if got, _ := os.ReadFile(src); string(got) != "10.0.0.1 box\n" {
		t.Fatalf("the mounted file holds %q", got)
	}
}
