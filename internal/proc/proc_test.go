package proc

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestParseStat(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Info
		ok   bool
	}{
		{"42 (sleep) S 1 42 42 0 -1 4194560", Info{PID: 42, PPID: 1, PGID: 42, SID: 42, State: 'S'}, true},
		{"7 (a b) c) (d) Z 3 4 5 0", Info{PID: 7, PPID: 3, PGID: 4, SID: 5, State: 'Z'}, true},
		{"7 (x) R", Info{}, false},
		{"garbage", Info{}, false},
		{"", Info{}, false},
		{"7 (x) R one 2 3", Info{}, false},
	} {
		got, ok := parseStat(7, []byte(tc.in))
		if tc.ok {
			tc.want.PID = 7
		}
		if ok != tc.ok || got != tc.want {
			t.Errorf("parseStat(%q) = %+v, %v; want %+v, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

// startTree starts sh -c script in a session of its own, as shell does.
func startTree(t *testing.T, script string) (*exec.Cmd, *Tree) {
	t.Helper()
	if err := SubreaperRefused(); err != nil {
		t.Skipf("no subreaper: %v", err)
	}
	cmd := exec.Command("/bin/sh", "-c", script)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := Start(cmd); err != nil {
		t.Fatal(err)
	}
	tree := &Tree{Leader: cmd.Process.Pid}
	go func() {
		_ = cmd.Wait()
		Done(cmd)
		tree.LeaderReaped()
	}()
	return cmd, tree
}

// waitMembers waits until the tree has n live members.
func waitMembers(t *testing.T, tree *Tree, n int) []int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		m := tree.Members()
		if len(m) == n {
			return m
		}
		if time.Now().After(deadline) {
			t.Fatalf("tree has %d members, want %d", len(m), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestTreeTakesEveryDescendant: a tree holds every process the command
// started, also one that left its session and cleared its environment, and
// one whose parent died.
func TestTreeTakesEveryDescendant(t *testing.T) {
	_, tree := startTree(t, "setsid sh -c 'env -i sleep 101 & exec sleep 102' & (env -i setsid sleep 104 &) ; exec sleep 103")
	members := waitMembers(t, tree, 4)
	res := tree.Stop(time.Second)
	if res.Killed || res.Left != 0 {
		t.Fatalf("Stop = %+v, want a clean SIGTERM", res)
	}
	for _, pid := range members {
		if Alive(pid) {
			t.Errorf("member %d outlived Stop", pid)
		}
	}
}

// TestTreeOfRoots: a tree of roots (what a keeper adopts) is those
// processes and their descendants while each root is the process that
// started at its start time; one whose start time differs (a pid reused)
// is not in it.
func TestTreeOfRoots(t *testing.T) {
	_, tree := startTree(t, "sleep 105 & sleep 106 & exec sleep 107")
	members := waitMembers(t, tree, 3)
	leader, ok := Lookup(tree.Leader)
	if !ok {
		t.Fatal("no leader")
	}
	roots := &Tree{Roots: map[int]uint64{tree.Leader: leader.Start}}
	if got := roots.Members(); len(got) != len(members) {
		t.Errorf("roots' tree %v, want %v", got, members)
	}
	other := &Tree{Roots: map[int]uint64{tree.Leader: leader.Start + 1}}
	if got := other.Members(); len(got) != 0 {
		t.Errorf("a root of another start time: %v, want none", got)
	}
	if res := tree.Stop(time.Second); res.Left != 0 {
		t.Fatalf("Stop = %+v", res)
	}
}

// TestStopKillsWhatIgnoresTerm: a tree that ignores SIGTERM is killed once
// the grace period is over.
func TestStopKillsWhatIgnoresTerm(t *testing.T) {
	_, tree := startTree(t, "trap '' TERM; sleep 100 & sleep 101")
	members := waitMembers(t, tree, 3)
	res := tree.Stop(50 * time.Millisecond)
	if !res.Killed || res.Left != 0 {
		t.Fatalf("Stop = %+v, want killed with nothing left", res)
	}
	for _, pid := range members {
		if Alive(pid) {
			t.Errorf("member %d outlived Stop", pid)
		}
	}
}

// TestReaperCollectsOrphans: an orphan that ends becomes a zombie child of
// this process (the subreaper); the reaper collects it, so its /proc entry
// goes. Without the reaper it would stay, a zombie, until the test ended.
func TestReaperCollectsOrphans(t *testing.T) {
	if err := SubreaperRefused(); err != nil {
		t.Skipf("no subreaper: %v", err)
	}
	cmd := exec.Command("/bin/sh", "-c", "sleep 0.05 & echo $!")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := Start(cmd); err != nil {
		t.Fatal(err)
	}
	var orphan int
	if _, err := fmt.Fscan(out, &orphan); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	Done(cmd)
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", orphan)); os.IsNotExist(err) {
			return
		}
		if time.Now().After(deadline) {
			info, _ := readStat(orphan, make([]byte, 512))
			t.Fatalf("orphan %d still there after 10 s: %+v", orphan, info)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestReadingInput: a process asleep reading its input is seen to be, by
// the input's name in /proc; one asleep otherwise, or reading another
// pipe, is not.
func TestReadingInput(t *testing.T) {
	if _, err := os.Stat("/proc/self/syscall"); err != nil {
		t.Skip("no /proc/PID/syscall")
	}
	start := func(script string) (*exec.Cmd, string) {
		t.Helper()
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { w.Close() })
		cmd := exec.Command("sh", "-c", script)
		cmd.Stdin = r
		// A group of its own, killed whole at the end: a pipeline's
		// processes outlived a kill of sh alone, and, this process being a
		// subreaper, became members of the next run's trees (-count=3).
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := Start(cmd); err != nil {
			t.Fatal(err)
		}
		r.Close()
		t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); _ = cmd.Wait(); Done(cmd) })
		id, err := PipeID(w)
		if err != nil {
			t.Fatal(err)
		}
		return cmd, id
	}
	within := func(what string, want bool, pid int, input string) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for ReadingInput([]int{pid}, input) != want {
			if time.Now().After(deadline) {
				t.Fatalf("%s: reading input is not %v", what, want)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	reader, in := start("read x")
	within("read", true, reader.Process.Pid, in)
	if !reading(reader.Process.Pid, in, false) {
		w, _ := os.ReadFile(fmt.Sprintf("/proc/%d/wchan", reader.Process.Pid))
		t.Fatalf("read: not seen from its wchan (%q)", w)
	}
	// A wait in select(2) (bash's read -t) and in poll(2) (Python's), where
	// the programs are there.
	if _, err := exec.LookPath("bash"); err == nil {
		selecter, in := start("exec bash -c 'read -t 100 x'")
		within("select", true, selecter.Process.Pid, in)
	}
	if _, err := exec.LookPath("python3"); err == nil {
		poller, in := start(`exec python3 -c 'import select; p = select.poll(); p.register(0, select.POLLIN); p.poll()'`)
		within("poll", true, poller.Process.Pid, in)
	}
	sleeper, in2 := start("exec sleep 100")
	time.Sleep(100 * time.Millisecond)
	if ReadingInput([]int{sleeper.Process.Pid}, in2) || reading(sleeper.Process.Pid, in2, false) {
		t.Fatal("sleep is said to read its input")
	}
	// Reading a pipe that is not its input.
	other, in3 := start("exec 3<&0; sleep 100 | read x")
	time.Sleep(100 * time.Millisecond)
	procs, _ := Snapshot()
	if ReadingInput(append(Descendants(procs, os.Getpid()), other.Process.Pid), in3) {
		t.Fatal("a read of another pipe is said to read the input")
	}
}

// TestEpollFor: an epoll that waits for a pipe to be readable is told from
// one that waits for another, by /proc's fdinfo.
func TestEpollFor(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	id, _ := PipeID(r)
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(epfd)
	is := func(fd uint64) bool {
		l, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", fd))
		return err == nil && l == id
	}
	if epollFor("/proc/self", uint64(epfd), is) {
		t.Fatal("an empty epoll waits for the pipe")
	}
	rfd, err := unix.Dup(int(r.Fd()))
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(rfd)
	if err := unix.EpollCtl(epfd, unix.EPOLL_CTL_ADD, rfd, &unix.EpollEvent{Events: unix.EPOLLOUT, Fd: int32(rfd)}); err != nil {
		t.Fatal(err)
	}
	if epollFor("/proc/self", uint64(epfd), is) {
		t.Fatal("an epoll for writing waits to read the pipe")
	}
	if err := unix.EpollCtl(epfd, unix.EPOLL_CTL_MOD, rfd, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(rfd)}); err != nil {
		t.Fatal(err)
	}
	if !epollFor("/proc/self", uint64(epfd), is) {
		t.Fatal("an epoll for reading the pipe is not seen")
	}
}

// TestReaperLeavesOwnGroup: a child started with os/exec alone, in this
// process's group, keeps its status for its Wait while the reaper runs:
// the reaper took it, and Wait failed with "no child processes" (a test's
// git beside a history keeper started through Start).
func TestReaperLeavesOwnGroup(t *testing.T) {
	beginReaping()
	cmd := exec.Command("/bin/sh", "-c", "exit 3")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		if info, ok := readStat(cmd.Process.Pid, make([]byte, 512)); !ok || info.State == 'Z' {
			break // a zombie, or collected already
		}
		if time.Now().After(deadline) {
			t.Fatal("the child did not end")
		}
		time.Sleep(time.Millisecond)
	}
	reapOrphans()
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 3 {
		t.Fatalf("Wait: %v", err)
	}
}

// TestLaunchWithoutSubreaper: where the kernel refuses to make toolkit a
// subreaper (qemu-user), a command runs all the same, and the refusal is
// there to be said. Run in a child test process, where the hook stands for
// the prctl before the first command.
func TestLaunchWithoutSubreaper(t *testing.T) {
	if os.Getenv("TOOLKIT_TEST_NO_SUBREAPER") == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestLaunchWithoutSubreaper$", "-test.v")
		cmd.Env = append(os.Environ(), "TOOLKIT_TEST_NO_SUBREAPER=1")
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS") {
			t.Fatalf("%v\n%s", err, out)
		}
		return
	}
	TestHookSubreaper = func() error { return syscall.EINVAL }
	r, err := Launch(Spec{Script: "echo ran"})
	if err != nil {
		t.Fatalf("a command did not run without a subreaper: %v", err)
	}
	b, _ := io.ReadAll(r.Out)
	<-r.Exited
	if string(b) != "ran\n" {
		t.Fatalf("output %q", b)
	}
	if note := SubreaperNote(); !strings.Contains(note, "PR_SET_CHILD_SUBREAPER: invalid argument") {
		t.Fatalf("note %q", note)
	}
}

// TestZombieChild: a child that ended and waits to be collected is seen,
// and left there; once collected, none is.
func TestZombieChild(t *testing.T) {
	cmd := exec.Command("/bin/sh", "-c", "exit 0")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !zombieChild() {
		if time.Now().After(deadline) {
			t.Fatal("the child ended, and no zombie was seen")
		}
		time.Sleep(time.Millisecond)
	}
	if !zombieChild() {
		t.Fatal("the look collected the zombie")
	}
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	if zombieChild() {
		t.Fatal("a zombie seen after the child was collected")
	}
}

// TestReaperFirstLook: an orphan that ended before the reaper caught
// SIGCHLD (its signal ignored then) is collected by the reaper's first
// look. Run in a child test process, where the reaper has not begun.
func TestReaperFirstLook(t *testing.T) {
	if os.Getenv("TOOLKIT_TEST_SIGNALS") != "first-look" {
		state, out := inChild(t, "TestReaperFirstLook", "first-look")
		if !state.Success() || !strings.Contains(out, "--- PASS") {
			t.Fatalf("%v\n%s", state, out)
		}
		return
	}
	if err := SubreaperRefused(); err != nil {
		t.Skipf("no subreaper: %v", err)
	}
	cmd := exec.Command("/bin/sh", "-c", "sleep 0.05 & echo $!") // it outlives sh: sh never collects it
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	b, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	var orphan int
	if _, err := fmt.Sscan(string(b), &orphan); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for info, ok := readStat(orphan, make([]byte, 512)); !ok || info.State != 'Z'; info, ok = readStat(orphan, make([]byte, 512)) {
		if !ok || time.Now().After(deadline) {
			t.Fatalf("orphan %d is no zombie child: %+v", orphan, info)
		}
		time.Sleep(time.Millisecond)
	}
	beginReaping()
	for {
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", orphan)); os.IsNotExist(err) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("orphan %d still a zombie after the reaper began", orphan)
		}
		time.Sleep(time.Millisecond)
	}
}
