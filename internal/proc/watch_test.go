package proc

import (
	"bytes"
	"errors"
	"os"
	"slices"
	"testing"
	"time"
)

// launchWatched starts script and a watch of its tree with lim, and
// returns the watch, the command, and a channel that gets the watch's
// OverLimit (the tree stopped on it).
func launchWatched(t *testing.T, script string, lim Limits) (*Watch, *Running, chan *OverLimit) {
	t.Helper()
	r, err := Launch(Spec{Script: script})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	over := make(chan *OverLimit, 1)
	w := StartWatch(r.Tree, lim, func(err error) {
		var ol *OverLimit
		if !errors.As(err, &ol) {
			t.Errorf("over with %v", err)
		}
		over <- ol
		r.Tree.Stop(time.Second)
	})
	return w, r, over
}

// TestWatchMemory: a tree that grows past its memory limit is stopped,
// once, and the usage says how far it got.
func TestWatchMemory(t *testing.T) {
	w, r, over := launchWatched(t, "tail -n 1 /dev/zero", Limits{MemoryBytes: 32 << 20})
	select {
	case ol := <-over:
		if ol.What != "memory" || ol.Peak <= 32<<20 || ol.Processes < 1 {
			t.Errorf("over: %+v", ol)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("not stopped")
	}
	st := <-r.Exited
	u := w.Stop(st)
	if u.PeakRSS <= 32<<20 || u.ProcessesPeak < 1 || u.CPU <= 0 || u.OOMKilled {
		t.Errorf("usage %+v", u)
	}
	select {
	case ol := <-over:
		t.Errorf("over twice: %+v", ol)
	default:
	}
}

// TestWatchProcesses: more processes than the limit, the tree is stopped;
// fewer, it runs to its end, and the usage counts them.
func TestWatchProcesses(t *testing.T) {
	w, r, over := launchWatched(t, "for i in 1 2 3 4 5 6; do sleep 5 & done; wait", Limits{Pids: 4})
	select {
	case ol := <-over:
		if ol.What != "process" || ol.Peak <= 4 {
			t.Errorf("over: %+v", ol)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("not stopped")
	}
	w.Stop(<-r.Exited)

	w, r, over = launchWatched(t, "sleep 0.3 & sleep 0.3 & wait", Limits{Pids: 10})
	u := w.Stop(<-r.Exited)
	if len(over) > 0 || u.ProcessesPeak < 3 {
		t.Errorf("usage %+v, over %d", u, len(over))
	}
}

func TestOverLimitWords(t *testing.T) {
	for _, tc := range []struct {
		ol   OverLimit
		want string
	}{
		{OverLimit{What: "memory", Limit: 2048 << 20, Peak: 2051<<20 - 5}, "memory limit 2048 MiB reached (peak 2051 MiB)"},
		{OverLimit{What: "process", Limit: 20, Peak: 101}, "process limit 20 reached (101 at once)"},
	} {
		if got := tc.ol.Error(); got != tc.want {
			t.Errorf("%q, want %q", got, tc.want)
		}
	}
	one := OverLimit{What: "memory", Limit: 64 << 20, Peak: 70 << 20, Processes: 1}
	if got := one.Said(); got != "memory limit 64 MiB reached (peak 70 MiB); 1 process stopped" {
		t.Errorf("%q", got)
	}
}

// TestReadProc: /proc/vmstat is read whole into a buffer of its size or
// more (every counter's name, oom_kill's among them, as os.ReadFile reads
// them), and up to a smaller buffer's size.
func TestReadProc(t *testing.T) {
	names := func(b []byte) []string {
		var out []string
		for line := range bytes.Lines(b) {
			name, _, _ := bytes.Cut(line, []byte(" "))
			out = append(out, string(name))
		}
		return out
	}
	want, err := os.ReadFile("/proc/vmstat")
	if err != nil {
		t.Skip(err)
	}
	got, err := readProc("/proc/vmstat", make([]byte, 16<<10))
	if err != nil || !slices.Equal(names(got), names(want)) {
		t.Fatalf("read %d bytes (%v), os.ReadFile %d", len(got), err, len(want))
	}
	if bytes.Contains(want, []byte("\noom_kill ")) && !bytes.Contains(got, []byte("\noom_kill ")) {
		t.Fatal("no oom_kill")
	}
	small, err := readProc("/proc/vmstat", make([]byte, 100))
	if err != nil || len(small) != 100 || !slices.Equal(names(small)[:2], names(want)[:2]) {
		t.Fatalf("100 bytes of /proc/vmstat: %q, %v", small, err)
	}
}
