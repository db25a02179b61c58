package jobs

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"toolkit/internal/proc"
)

// TestOrphansAreTheJobsOnly: what is left of a job whose keeper died is
// found by its leader's session only while the leader's pid is the process
// that started (a pid reused names another's session), and by a marker that
// names the job's directory, so that a process of another state directory's
// job of the same id is never taken for one of this job's.
func TestOrphansAreTheJobsOnly(t *testing.T) {
	start := func(env ...string) *exec.Cmd {
		cmd := exec.Command("sleep", "30")
		cmd.Env = append(os.Environ(), env...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := proc.Start(cmd); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait(); proc.Done(cmd) })
		return cmd
	}
	alive := func(cmd *exec.Cmd) bool {
		info, ok := proc.Lookup(cmd.Process.Pid)
		return ok && info.State != 'Z' && info.State != 'X'
	}
	dir := filepath.Join(t.TempDir(), "state", "jobs", "3f2a")
	other := filepath.Join(t.TempDir(), "state", "jobs", "3f2a")
	leader := start()
	stranger := start(Marker(other))
	info, ok := proc.Lookup(leader.Process.Pid)
	if !ok {
		t.Fatal("no /proc")
	}
	// The keeper: a pid that no longer runs.
	gone := exec.Command("true")
	if err := proc.Start(gone); err != nil {
		t.Fatal(err)
	}
	_ = gone.Wait()
	proc.Done(gone)
	j := &Job{ID: "3f2a", Dir: dir, Spec: Spec{Grace: Duration(100 * time.Millisecond)}}
	j.Status.Keeper, j.Status.Leader, j.Status.LeaderStart = gone.Process.Pid, leader.Process.Pid, info.Start+1
	j.stopOrphans()
	if !alive(leader) || !alive(stranger) {
		t.Fatalf("a session whose leader started at another time, or a process of another state directory's job, was stopped (leader alive %v, stranger alive %v)", alive(leader), alive(stranger))
	}
	// The leader as it started: its session is the job's.
	j.Status.LeaderStart = info.Start
	j.stopOrphans()
	if alive(leader) {
		t.Fatal("the job's own session was not stopped")
	}
	if !alive(stranger) {
		t.Fatal("another state directory's job was stopped")
	}
}
