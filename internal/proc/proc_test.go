package proc

import (
	"fmt"
	"os"
	"os/exec"
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

// startTree starts sh -c script in a session of its own, as shell does.
func startTree(t *testing.T, script string) (*exec.Cmd, *Tree) {
	t.Helper()
	if err := BecomeSubreaper(); err != nil {
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
