package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// minimalImage builds a root file system with nothing but Debian's static
// busybox as /bin/sh and its applets, /tmp, and toolkit installed by
// install.sh with its links.
func minimalImage(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("skipped: chroot needs root, and this test does not run as root")
	}
	busybox := "/bin/busybox"
	if out, err := exec.Command("file", "-L", busybox).Output(); err != nil || !bytes.Contains(out, []byte("statically linked")) {
		t.Skip("skipped: no static busybox at /bin/busybox (apt-get install busybox-static; .ci/run does)")
	}
	rootfs := t.TempDir()
	for _, d := range []string{"bin", "tmp", "proc", "work"} {
		if err := os.MkdirAll(filepath.Join(rootfs, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(filepath.Join(rootfs, "tmp"), 0o1777); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(busybox)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(rootfs, "bin", "busybox"), b, 0o755); err != nil {
		t.Fatal(err)
	}
	list, err := exec.Command(busybox, "--list").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, applet := range strings.Fields(string(list)) {
		if applet != "busybox" {
			_ = os.Symlink("busybox", filepath.Join(rootfs, "bin", applet))
		}
	}
	// install.sh PREFIX puts toolkit in PREFIX/bin: here, /bin of the image.
	install := exec.Command("./install.sh", rootfs)
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("install.sh: %v: %s", err, out)
	}
	return rootfs
}

// inImage runs argv inside the image with stdin, and returns stdout.
func inImage(t *testing.T, rootfs, stdin string, argv ...string) (string, int) {
	t.Helper()
	cmd := exec.Command("chroot", append([]string{rootfs}, argv...)...)
	cmd.Env = []string{"PATH=/bin", "TMPDIR=/tmp", "HOME=/"}
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if errb.Len() > 0 {
			t.Logf("%v stderr: %s", argv, errb.String())
		}
		return out.String(), code
	case <-time.After(60 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("%v did not end within 60 s", argv)
	}
	return "", 0
}

// TestMinimalImage runs every applet in an image that holds nothing but a
// static /bin/sh (busybox) and toolkit. First with what any container
// runtime adds to an image, /proc and /dev/null (busybox sh itself needs
// /dev/null for a background job); then with neither.
func TestMinimalImage(t *testing.T) {
	rootfs := minimalImage(t)
	devNull := filepath.Join(rootfs, "dev", "null")
	if err := os.MkdirAll(filepath.Dir(devNull), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mknod(devNull, syscall.S_IFCHR|0o666, 1<<8|3); err != nil {
		t.Skipf("skipped: cannot make /dev/null in the image: %v", err)
	}
	proc := filepath.Join(rootfs, "proc")
	if out, err := exec.Command("mount", "-t", "proc", "proc", proc).CombinedOutput(); err != nil {
		t.Skipf("skipped: cannot mount /proc in the image: %v: %s", err, out)
	}
	mounted := true
	unmount := func() {
		if mounted {
			_ = exec.Command("umount", "-l", proc).Run()
			mounted = false
		}
	}
	defer unmount()

	// shell, under a timeout, with a helper that ignores SIGTERM.
	out, code := inImage(t, rootfs, "", "/bin/toolkit", "shell", "--timeout", "1", "--grace", "200ms", `(trap "" TERM; sleep 31.25) & echo started; sleep 30`)
	if code != 0 || !strings.Contains(out, "started\n[timed out after 1 s; killed after 0.2 s without an answer to SIGTERM]\n") {
		t.Fatalf("shell under a timeout: exit %d:\n%s", code, out)
	}
	if pids := marked("31.25"); len(pids) > 0 {
		t.Fatalf("the helper outlived the timeout: %v", pids)
	}

	// A background helper that keeps the output: it goes on as a job.
	out, _ = inImage(t, rootfs, "", "/bin/toolkit-shell", "--json", "sleep 32.5 & echo started")
	var o struct {
		Text          string `json:"text"`
		Background    []int  `json:"background"`
		BackgroundLog string `json:"background_log"`
		Job           string `json:"job"`
	}
	if err := json.Unmarshal([]byte(out), &o); err != nil || len(o.Background) != 1 || o.BackgroundLog != "/tmp/toolkit-0/jobs/"+o.Job+"/log" {
		t.Fatalf("a background helper: %v %s", err, out)
	}
	for _, pid := range o.Background {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}

	// write, then read what it wrote.
	out, code = inImage(t, rootfs, "hello\nimage\n", "/bin/toolkit-write", "/work/notes.txt")
	if code != 0 || out != "created /work/notes.txt: 12 bytes (2 lines); sha256 41939b5a4845\n" {
		t.Fatalf("write: exit %d: %q", code, out)
	}
	out, code = inImage(t, rootfs, `{"path":"/work/notes.txt","offset":2}`, "/bin/toolkit-read")
	if code != 0 || out != "     2\timage\n[lines 2-2 of 2; sha256 41939b5a4845]\n" {
		t.Fatalf("read: exit %d: %q", code, out)
	}

	// edit, then patch through the apply_patch link.
	out, code = inImage(t, rootfs, "", "/bin/toolkit-edit", "/work/notes.txt", "--old", "image", "--new", "IMAGE")
	if code != 0 || !strings.Contains(out, "\n[edited /work/notes.txt: 1 edit (exact); line 2; sha256 ") {
		t.Fatalf("edit: exit %d: %q", code, out)
	}
	out, code = inImage(t, rootfs, "*** Begin Patch\n*** Update File: /work/notes.txt\n@@\n-IMAGE\n+patched\n*** End Patch\n", "/bin/apply_patch")
	if code != 0 || !strings.HasPrefix(out, "M /work/notes.txt (+1 -1) sha256 ") {
		t.Fatalf("apply_patch: exit %d: %q", code, out)
	}

	// grep and glob, with no grep or find of the image's.
	out, code = inImage(t, rootfs, "", "/bin/toolkit-grep", "patched", "/work")
	if code != 0 || !strings.HasPrefix(out, "/work/notes.txt:2:patched\n[1 match in 1 file]") {
		t.Fatalf("grep: exit %d: %q", code, out)
	}
	out, code = inImage(t, rootfs, "", "/bin/toolkit-glob", "*.txt", "/work")
	if code != 0 || !strings.HasPrefix(out, "/work/notes.txt\n[1 match]") {
		t.Fatalf("glob: exit %d: %q", code, out)
	}

	// A job: started in the background, followed, answered, ended.
	out, code = inImage(t, rootfs, "", "/bin/toolkit-shell", "--json", "--yield", "30", `read line; echo "got $line"`)
	var started struct {
		Job     string `json:"job"`
		Waiting bool   `json:"waiting_for_input"`
	}
	if err := json.Unmarshal([]byte(out), &started); code != 0 || err != nil || started.Job == "" || !started.Waiting {
		t.Fatalf("a job: exit %d: %v %q", code, err, out)
	}
	out, code = inImage(t, rootfs, `{"id":"`+started.Job+`","input":"hi\n","wait_secs":30}`, "/bin/toolkit-job")
	// The image's work is at /, which history never keeps: said once.
	if code != 0 || out != "got hi\n[history is off for this call: / is not a tree toolkit keeps the history of (/ and the temporary directory never are)]\n[exit 0]\n" {
		t.Fatalf("the job's answer: exit %d: %q", code, out)
	}

	// toolkit call's bash tool with no bash in the image: /bin/sh runs its
	// commands, said once.
	bashBlock := `{"type":"tool_use","id":"toolu_01","name":"bash","input":{"command":"echo $0"}}`
	out, code = inImage(t, rootfs, bashBlock, "/bin/toolkit", "call")
	if code != 0 || !strings.Contains(out, `"content":"/bin/sh\n[bash is not in this image: /bin/sh runs the commands]\n`) {
		t.Fatalf("the bash tool without bash: exit %d: %q", code, out)
	}
	out, _ = inImage(t, rootfs, bashBlock, "/bin/toolkit", "call")
	if strings.Contains(out, "bash is not in this image") {
		t.Fatalf("the note was said again: %q", out)
	}

	// toolkit mcp: initialize, and a call.
	session := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n"
	out, code = inImage(t, rootfs, session, "/bin/toolkit", "mcp")
	if code != 0 || !strings.Contains(out, `"serverInfo":{"name":"toolkit"`) {
		t.Fatalf("mcp initialize: exit %d: %q", code, out)
	}

	// And without /proc and /dev: a stop still ends the command's process
	// group; the command's stdin is an empty pipe.
	unmount()
	if err := os.Remove(devNull); err != nil {
		t.Fatal(err)
	}
	out, code = inImage(t, rootfs, "", "/bin/toolkit", "shell", "--timeout", "1", "--grace", "200ms", `trap "" TERM; sleep 33.75`)
	if code != 0 || !strings.Contains(out, "[timed out after 1 s; killed after 0.2 s without an answer to SIGTERM]\n[killed by signal 9 (SIGKILL)]\n") {
		t.Fatalf("shell without /proc: exit %d:\n%s", code, out)
	}
	if pids := marked("33.75"); len(pids) > 0 {
		t.Fatalf("without /proc, the command outlived the timeout: %v", pids)
	}
}
