package proc

import (
	"context"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestChildBesideTheReaper: a child started through StartChild keeps its
// status for its caller while the reaper collects orphans beside it (a
// toolkit call array of a shell block and a PDF read; pdftotext started
// with os/exec alone lost its status to the reaper about 1 time in 60).
func TestChildBesideTheReaper(t *testing.T) {
	// A command whose orphans keep the reaper busy.
	r, err := Launch(Spec{Script: "i=0; while [ $i -lt 400 ]; do (true &); i=$((i+1)); done"})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for i := range 200 {
		out, err := Output(context.Background(), Child{Path: "sh", Args: []string{"sh", "-c", "echo $0", "child"}})
		if err != nil || string(out) != "child\n" {
			t.Fatalf("run %d: %q, %v", i, out, err)
		}
	}
	<-r.Exited
}

// TestOutputStops: Output's context ends the child, and says so; a
// failing child's first line of stderr is its error.
func TestOutputStops(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := Output(ctx, Child{Path: "sleep", Args: []string{"sleep", "30"}})
	if err == nil || time.Since(start) > 10*time.Second {
		t.Fatalf("%v after %v", err, time.Since(start))
	}
	_, err = Output(context.Background(), Child{Path: "sh", Args: []string{"sh", "-c", "echo first >&2; echo second >&2; exit 3"}})
	if err == nil || err.Error() != "first" {
		t.Fatalf("error %v, want first", err)
	}
	p, err := StartChild(Child{Path: "sleep", Args: []string{"sleep", "30"}, Session: true})
	if err != nil {
		t.Fatal(err)
	}
	p.Signal(syscall.SIGTERM)
	if err := p.Wait(); err == nil || !strings.Contains(err.Error(), "terminated") {
		t.Fatalf("wait: %v", err)
	}
}
