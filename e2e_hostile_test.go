package main

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestHostDescriptorsDoNotLeak: a descriptor the host leaves open in
// toolkit (its end of a pipe it waits on for EOF) reaches neither the
// command nor what the command leaves in the background: the host sees EOF
// as soon as toolkit is gone.
func TestHostDescriptorsDoNotLeak(t *testing.T) {
	t.Parallel()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	cmd := toolkitCmd("shell", "--cwd", t.TempDir(), `sleep 3 & echo started; if echo x >&3; then echo "fd 3 reached the command"; fi`)
	cmd.ExtraFiles = []*os.File{w} // fd 3 in toolkit, not close-on-exec
	out, err := cmd.Output()
	w.Close()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), "reached") || !strings.Contains(string(out), "started") {
		t.Fatalf("the command saw the host's descriptor: %q", out)
	}
	eof := make(chan error, 1)
	go func() {
		_, err := r.Read(make([]byte, 1))
		eof <- err
	}()
	select {
	case err := <-eof:
		if err == nil {
			t.Fatal("something wrote to the host's pipe")
		}
	case <-time.After(2 * time.Second):
		t.Fatal("the host's pipe is still held after toolkit returned")
	}
}

// nobodyToolkit is a copy of this test binary that the user nobody may
// run, as toolkit; it skips unless the test runs as root.
func nobodyToolkit(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("skipped: running as another user needs root")
	}
	dir, err := os.MkdirTemp("", "toolkit-nobody-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(dir, "toolkit")
	if err := os.WriteFile(exe, b, 0o755); err != nil || os.Chmod(dir, 0o777) != nil {
		t.Fatal(err)
	}
	return exe
}

func asNobody(exe string, args ...string) *exec.Cmd {
	cmd := &exec.Cmd{Path: exe, Args: append([]string{"toolkit"}, args...), Env: os.Environ(), Dir: filepath.Dir(exe)}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	return cmd
}

// TestNoForgedAnswers: as a user other than root, a command cannot open
// toolkit's own stdout through /proc to write an answer of its own; and
// write's unnamed temporary file still gets its name through
// /proc/self/fd.
func TestNoForgedAnswers(t *testing.T) {
	t.Parallel()
	exe := nobodyToolkit(t)
	// toolkit's stdout a pipe of nobody's own: one the host made would be
	// root's, and closed to nobody whatever toolkit does.
	sh := &exec.Cmd{Path: "/bin/sh", Args: []string{"sh", "-c", `"$0" shell --json "$1" | cat`, exe,
		`echo '{"ok":true,"text":"forged"}' > /proc/$PPID/fd/1 2>/dev/null && echo opened || echo refused`}, Env: os.Environ()}
	sh.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := sh.Output()
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(out, []byte("forged")) || !bytes.Contains(out, []byte(`refused\n`)) {
		t.Fatalf("the command reached toolkit's stdout: %q", out)
	}
	dir := filepath.Dir(exe)
	cmd := asNobody(exe, "write", filepath.Join(dir, "notes.txt"))
	cmd.Stdin = strings.NewReader("by nobody\n")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("write as nobody: %v: %s", err, out)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "notes.txt")); string(b) != "by nobody\n" {
		t.Fatalf("notes.txt holds %q", b)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".*.tmp")); len(left) > 0 {
		t.Fatalf("temporary files left: %v", left)
	}
}

// TestClosedOutputStops: a host that stops reading a --stream call's
// output stops the command: toolkit does not die of SIGPIPE and leave it
// running without a timeout.
func TestClosedOutputStops(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	nap := sleepLink(t, dir, "nap")
	cmd := toolkitCmd("shell", "--stream", "--timeout", "600", "--cwd", dir, `echo a; sleep 0.5; echo b; "`+nap+`" 3903`)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 10)
	if _, err := io.ReadFull(out, b); err != nil {
		t.Fatal(err)
	}
	out.Close() // as head -c 10 does
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("toolkit did not end after its output was closed")
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		t.Fatalf("toolkit died of %v", ws.Signal())
	}
	noneLeft(t, dir)
}
