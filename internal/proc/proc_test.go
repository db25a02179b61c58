package proc

import (
	"fmt"
	"os"
	"os/exec"
	"slices"
	"syscall"
	"testing"
	"time"
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

// startTree starts sh -c script in a session of its own, with the marker in
// its environment, as shell does.
func startTree(t *testing.T, script, marker string) (*exec.Cmd, *Tree) {
	t.Helper()
	if err := BecomeSubreaper(); err != nil {
		t.Skipf("no subreaper: %v", err)
	}
	cmd := exec.Command("/bin/sh", "-c", script)
	cmd.Env = append(os.Environ(), marker)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := Start(cmd); err != nil {
		t.Fatal(err)
	}
	tree := &Tree{Leader: cmd.Process.Pid, Marker: marker}
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

// TestTreeFindsItsOwn: a tree holds the processes of its command, including
// one in a session of its own (found by the marker) and one that also lost
// the marker but is the child of a member; and not a process of another tree.
func TestTreeFindsItsOwn(t *testing.T) {
	other, otherTree := startTree(t, "exec sleep 100", "TOOLKIT_SHELL_CALL=other")
	defer other.Process.Kill()
	waitMembers(t, otherTree, 1)

	_, tree := startTree(t, "setsid sh -c 'env -i sleep 101 & exec sleep 102' & exec sleep 103", "TOOLKIT_SHELL_CALL=mine")
	members := waitMembers(t, tree, 3)
	if slices.Contains(members, other.Process.Pid) {
		t.Fatalf("tree %v holds the other tree's process %d", members, other.Process.Pid)
	}
	res := tree.Stop(time.Second)
	if res.Killed || res.Left != 0 {
		t.Fatalf("Stop = %+v, want a clean SIGTERM", res)
	}
	for _, pid := range members {
		if Alive(pid) {
			t.Errorf("member %d outlived Stop", pid)
		}
	}
	if !Alive(other.Process.Pid) {
		t.Fatal("Stop killed another tree's process")
	}
}

// TestStopKillsWhatIgnoresTerm: a tree that ignores SIGTERM is killed once
// the grace period is over.
func TestStopKillsWhatIgnoresTerm(t *testing.T) {
	_, tree := startTree(t, "trap '' TERM; sleep 100 & sleep 101", "TOOLKIT_SHELL_CALL=stubborn")
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

// TestExclusiveTakesEveryDescendant: in exclusive mode (the CLI), even a
// process with no marker in a session of its own belongs to the tree.
func TestExclusiveTakesEveryDescendant(t *testing.T) {
	_, tree := startTree(t, "env -i setsid sleep 100 & exec sleep 101", "TOOLKIT_SHELL_CALL=excl")
	tree.Exclusive = true
	waitMembers(t, tree, 2)
	if res := tree.Stop(time.Second); res.Left != 0 {
		t.Fatalf("Stop = %+v", res)
	}
}

// TestReaperCollectsOrphans: an orphan that ends becomes a zombie child of
// this process (the subreaper); the reaper collects it, so its /proc entry
// goes. Without the reaper it would stay, a zombie, until the test ended.
func TestReaperCollectsOrphans(t *testing.T) {
	if err := BecomeSubreaper(); err != nil {
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
