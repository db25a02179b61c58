package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// toolkitCmd runs this test binary as toolkit, the way testscript does.
func toolkitCmd(args ...string) *exec.Cmd {
	exe, err := os.Executable()
	if err != nil {
		panic(err)
	}
	// No history: a background capture of a tree's baseline would outlive
	// the tests that check nothing is left (history's own scenarios turn
	// it on).
	return &exec.Cmd{Path: exe, Args: append([]string{"toolkit"}, args...), Env: append(os.Environ(), "TOOLKIT_HISTORY=off")}
}

// openPTY returns the two ends of a new pseudo-terminal.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetUint32(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	return m, s
}

// readUntil reads r until what it read contains want, for at most 20 s.
func readUntil(t *testing.T, r *bufio.Reader, want string) string {
	t.Helper()
	got := make(chan string, 1)
	go func() {
		var b strings.Builder
		for !strings.Contains(b.String(), want) {
			c, err := r.ReadByte()
			if err != nil {
				break
			}
			b.WriteByte(c)
		}
		got <- b.String()
	}()
	select {
	case s := <-got:
		if !strings.Contains(s, want) {
			t.Fatalf("output ended without %q: %q", want, s)
		}
		return s
	case <-time.After(20 * time.Second):
		t.Fatalf("no %q after 20 s", want)
	}
	return ""
}

// TestLiveTerminal: in person mode on a terminal, the output shows as it
// comes, then the end lines. The command waits for a file that the test makes
// only after it saw the first line on the terminal: without the live view the
// first line would not come before the command ends, and the test would fail.
func TestLiveTerminal(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	master, slave := openPTY(t)
	defer master.Close()
	cmd := toolkitCmd("shell", "--cwd", dir, "echo first; while [ ! -e go ]; do sleep 0.01; done; echo second")
	cmd.Stdout, cmd.Stderr = slave, slave
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	slave.Close()
	r := bufio.NewReader(master)
	readUntil(t, r, "first\r\n")
	if err := os.WriteFile(filepath.Join(dir, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	rest := readUntil(t, r, "[exit 0]\r\n")
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	if rest != "second\r\n[exit 0]\r\n" {
		t.Fatalf("after the first line the terminal showed %q", rest)
	}
}

// TestStreamIsLive: --stream prints an output event while the command still
// runs, the same way.
func TestStreamIsLive(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cmd := toolkitCmd("shell", "--stream", "--cwd", dir, "echo first; while [ ! -e go ]; do sleep 0.01; done; echo second")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(out)
	first := readUntil(t, r, "\n")
	if first != `{"type":"output","text":"first\n"}`+"\n" {
		t.Fatalf("first event %q", first)
	}
	if err := os.WriteFile(filepath.Join(dir, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	rest, _ := io.ReadAll(r)
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(rest), "\n"), "\n")
	if len(lines) != 2 || lines[0] != `{"type":"output","text":"second\n"}` || !strings.HasPrefix(lines[1], `{"type":"end","outcome":{"ok":true,"text":"first\nsecond\n[exit 0]\n"`) {
		t.Fatalf("then %q", rest)
	}
}

// TestStreamShowsAPrompt: a line without its end, a prompt, is sent once
// the output has been quiet a moment, not when its line ends; what follows
// on the line is sent without repeating it.
func TestStreamShowsAPrompt(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cmd := toolkitCmd("shell", "--stream", "--cwd", dir, "printf 'Enter name: '; while [ ! -e go ]; do sleep 0.01; done; echo bob")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(out)
	if first := readUntil(t, r, "\n"); first != `{"type":"output","text":"Enter name: "}`+"\n" {
		t.Fatalf("first event %q", first)
	}
	if err := os.WriteFile(filepath.Join(dir, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	rest, _ := io.ReadAll(r)
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(rest), "\n"), "\n")
	if len(lines) != 2 || lines[0] != `{"type":"output","text":"bob\n"}` || !strings.HasPrefix(lines[1], `{"type":"end","outcome":{"ok":true,"text":"Enter name: bob\n[exit 0]\n"`) {
		t.Fatalf("then %q", rest)
	}
}
