package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"toolkit/internal/cut"
	"toolkit/internal/jobs"
)

// jobCmd is toolkitCmd with the jobs kept in state.
func jobCmd(state string, args ...string) *exec.Cmd {
	cmd := toolkitCmd(args...)
	cmd.Env = append(cmd.Env, "TOOLKIT_STATE="+state)
	return cmd
}

// TestManyJobs: 50 jobs started at once each get an id of their own and
// run; the list shows them all; --stop-all stops every one, keepers
// included.
func TestManyJobs(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc to count processes with")
	}
	dir := t.TempDir()
	state := filepath.Join(dir, "state")
	marker := sleepLink(t, dir, "many-jobs-marker")
	t.Cleanup(func() { killMarked(dir) })
	n := 12 // 50 at full size: ./check --ci
	if full() {
		n = 50
	}
	ids := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, err := jobCmd(state, "shell", "--json", "--background", fmt.Sprintf("echo job %d; exec %s 1000", i, marker)).Output()
			var o struct {
				Text string `json:"text"`
				Job  string `json:"job"`
			}
			if err != nil || json.Unmarshal(out, &o) != nil || o.Job == "" {
				t.Errorf("job %d: %v %s", i, err, out)
				return
			}
			// Its first output, or nothing yet on a busy machine.
			if want := fmt.Sprintf("job %d\n[still running as job %s; ", i, o.Job); !strings.HasPrefix(o.Text, want) && !strings.HasPrefix(o.Text, "[still running") {
				t.Errorf("job %d: %q", i, o.Text)
			}
			ids[i] = o.Job
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	seen := map[string]bool{}
	for _, id := range ids {
		if seen[id] {
			t.Fatalf("two jobs got the id %s", id)
		}
		seen[id] = true
	}
	if got := len(marked(marker)); got != n {
		t.Fatalf("%d commands running, want %d", got, n)
	}
	out, err := jobCmd(state, "job").Output()
	if err != nil || !bytes.HasSuffix(out, []byte(fmt.Sprintf("[%d jobs, %d running]\n", n, n))) {
		t.Fatalf("the list: %v\n%s", err, out)
	}
	// Each shows its own output, once: here, or in the call that started it.
	for i, id := range ids {
		out, err = jobCmd(state, "job", id).Output()
		last := "[still running as job " + id + "]\n"
		if err != nil || string(out) != last && string(out) != fmt.Sprintf("job %d\n", i)+last {
			t.Fatalf("job %s: %v\n%s", id, err, out)
		}
	}
	out, err = jobCmd(state, "job", "--stop-all").Output()
	if err != nil || !bytes.HasPrefix(out, []byte(fmt.Sprintf("[stopped %d jobs: ", n))) {
		t.Fatalf("--stop-all: %v\n%s", err, out)
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(marked(marker))+len(marked(state)) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("left running: %d commands, %d keepers", len(marked(marker)), len(marked(state)))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestJobLogCapped: a job that prints far more than the log keeps has its
// log stop at jobs.MaxLog, says so, and its keeper's memory stays what it
// is for a small job.
func TestJobLogCapped(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc to read a keeper's memory from")
	}
	size := int64(300 << 20) // past the log's 256 MiB
	if full() {
		size = 1 << 30
	}
	dir := t.TempDir()
	state := filepath.Join(dir, "state")
	t.Cleanup(func() { killMarked(dir) })
	peak := func(bytes int64) (int64, *jobs.Job) {
		// The job prints, then waits to be looked at: its keeper is still
		// there to be measured.
		out, err := jobCmd(state, "shell", "--json", "--background", fmt.Sprintf("head -c %d /dev/zero; touch %s/printed-%d; exec sleep 1000", bytes, dir, bytes)).Output()
		var o struct {
			Job string `json:"job"`
		}
		if err != nil || json.Unmarshal(out, &o) != nil {
			t.Fatalf("%v %s", err, out)
		}
		deadline := time.Now().Add(2 * time.Minute)
		for {
			if _, err := os.Stat(fmt.Sprintf("%s/printed-%d", dir, bytes)); err == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the job of %d bytes did not finish printing", bytes)
			}
			time.Sleep(20 * time.Millisecond)
		}
		j := &jobs.Job{ID: o.Job, Dir: filepath.Join(state, "jobs", o.Job)}
		b, err := os.ReadFile(filepath.Join(j.Dir, "status.json"))
		if err != nil || json.Unmarshal(b, &j.Status) != nil {
			t.Fatal(err)
		}
		status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", j.Status.Keeper))
		if err != nil {
			t.Fatal(err)
		}
		for line := range strings.Lines(string(status)) {
			if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
				kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
				return kb << 10, j
			}
		}
		t.Fatal("no VmHWM")
		return 0, nil
	}
	small, _ := peak(1 << 20)
	big, j := peak(size)
	t.Logf("keeper peak RSS: %.1f MiB after 1 MiB of output, %.1f MiB after %d MiB", float64(small)/(1<<20), float64(big)/(1<<20), size>>20)
	if big > small+4<<20 {
		t.Errorf("the keeper grew with its job's output: %d bytes at 1 MiB, %d at %d MiB", small, big, size>>20)
	}
	// The log stops at its bound, and says so at its end.
	fi, err := os.Stat(j.Log())
	if err != nil {
		t.Fatal(err)
	}
	note := fmt.Sprintf("\n[toolkit: the output went on; this log keeps its first %d bytes]\n", jobs.MaxLog)
	if fi.Size() != jobs.MaxLog+int64(len(note)) {
		t.Errorf("log of %d bytes, want %d", fi.Size(), jobs.MaxLog+int64(len(note)))
	}
	out, err := jobCmd(state, "job", "--signal", "stop", j.ID).Output()
	want := fmt.Sprintf("[the job wrote %s; its log kept the first 256.0 MiB]", cut.Size(size))
	if err != nil || !bytes.Contains(out, []byte(want)) {
		t.Errorf("stop: %v: want %q in the end of\n%s", err, want, out[max(0, len(out)-2000):])
	}
}
