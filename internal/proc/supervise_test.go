package proc

import (
	"context"
	"testing"
	"time"
)

// supervised launches script under a Supervisor of s (its Tree and Exited
// filled in) and ctx.
func supervised(t *testing.T, ctx context.Context, script string, s Supervision) (*Running, *Supervisor) {
	t.Helper()
	r, err := Launch(Spec{Script: script})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	s.Tree, s.Exited = r.Tree, r.Exited
	return r, Supervise(ctx, s)
}

// cause waits for sv's first cause.
func cause(t *testing.T, sv *Supervisor) *Cause {
	t.Helper()
	select {
	case c := <-sv.Causes():
		return c
	case <-time.After(20 * time.Second):
		t.Fatal("no cause to stop after 20 s")
		return nil
	}
}

// stopAndEnd stops r's tree through sv and ends the supervision.
func stopAndEnd(t *testing.T, r *Running, sv *Supervisor) StopResult {
	t.Helper()
	sv.Begin(func() StopResult { return r.Tree.Stop(time.Second) })
	sv.Begin(func() StopResult { t.Error("a second stop began"); return StopResult{} })
	<-sv.Stopped()
	res, _ := sv.End(<-sv.Exited())
	return res
}

// TestSuperviseCauses: each limit and the caller's context is said as the
// cause it is, once, and the stop the owner begins ends the tree.
func TestSuperviseCauses(t *testing.T) {
	longAgo := time.Now().Add(-time.Hour)
	cancelled, cancel := context.WithCancelCause(context.Background())
	cancel(&Cause{Kind: Signalled, By: "SIGTERM", Whom: "toolkit"})
	for _, tc := range []struct {
		name string
		ctx  context.Context
		s    Supervision
		want Cause
	}{
		{"timeout", context.Background(), Supervision{Timeout: 50 * time.Millisecond}, Cause{Kind: Timeout, After: 50 * time.Millisecond}},
		{"idle", context.Background(), Supervision{Idle: 50 * time.Millisecond, LastOutput: func() time.Time { return longAgo }}, Cause{Kind: Idle, After: 50 * time.Millisecond}},
		// A lifetime already over when the supervision starts.
		{"lifetime", context.Background(), Supervision{Lifetime: time.Minute, Started: longAgo}, Cause{Kind: Timeout, After: time.Minute}},
		{"context", cancelled, Supervision{Timeout: time.Hour}, Cause{Kind: Signalled, By: "SIGTERM", Whom: "toolkit"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, sv := supervised(t, tc.ctx, "sleep 60", tc.s)
			got := cause(t, sv)
			if *got != tc.want {
				t.Errorf("cause %+v, want %+v", *got, tc.want)
			}
			if res := stopAndEnd(t, r, sv); res.Killed || res.Left != 0 {
				t.Errorf("stop: %+v", res)
			}
			select {
			case c := <-sv.Causes():
				t.Errorf("a second cause: %+v", c)
			default:
			}
		})
	}
}

// TestSuperviseIdleMovesOn: output after the idle timer was set moves the
// limit on: the stop comes only once there was none for that long.
func TestSuperviseIdleMovesOn(t *testing.T) {
	const idle = 200 * time.Millisecond
	began := time.Now()
	last := began.Add(300 * time.Millisecond) // output 300 ms in, and none after
	r, sv := supervised(t, context.Background(), "sleep 60", Supervision{Idle: idle, LastOutput: func() time.Time { return last }})
	cause(t, sv)
	if at := time.Since(began); at < 500*time.Millisecond {
		t.Errorf("stopped %v in, %v after the last output", at, at-300*time.Millisecond)
	}
	stopAndEnd(t, r, sv)
}

// TestSuperviseLeaderEnd: the leader's end is said once, and ends the
// leader's time limits: a command that ends before its timeout gives no
// cause, and End needs no stop.
func TestSuperviseLeaderEnd(t *testing.T) {
	_, sv := supervised(t, context.Background(), "exit 3", Supervision{Timeout: 300 * time.Millisecond, Idle: 300 * time.Millisecond, LastOutput: time.Now})
	st := <-sv.Exited()
	if st.ExitCode() != 3 {
		t.Errorf("exit code %d, want 3", st.ExitCode())
	}
	select {
	case c := <-sv.Causes():
		t.Errorf("a cause after the leader's end: %+v", *c)
	case <-time.After(600 * time.Millisecond):
	}
	if sv.Stopping() {
		t.Error("stopping with no stop begun")
	}
	if _, u := sv.End(st); u.ProcessesPeak < 1 {
		t.Errorf("usage %+v", u)
	}
}

// TestSuperviseLimit: a resource limit is a cause, as the watch words it.
func TestSuperviseLimit(t *testing.T) {
	r, sv := supervised(t, context.Background(), "tail -n 1 /dev/zero", Supervision{Limits: Limits{MemoryBytes: 32 << 20}})
	c := cause(t, sv)
	if c.Kind != OverALimit || c.Limit == nil || c.Limit.What != "memory" {
		t.Errorf("cause %+v, want the memory limit", *c)
	}
	stopAndEnd(t, r, sv)
}

// TestSuperviseNoLeader: a tree handed over without its leader is held to
// its lifetime, and never says an end of a leader.
func TestSuperviseNoLeader(t *testing.T) {
	r, err := Launch(Spec{Script: "sleep 60"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	adopted := &Tree{Roots: map[int]uint64{}}
	if info, ok := Lookup(r.Cmd.Process.Pid); ok {
		adopted.Roots[r.Cmd.Process.Pid] = info.Start
	}
	sv := Supervise(context.Background(), Supervision{Tree: adopted, Lifetime: 100 * time.Millisecond, Started: time.Now()})
	if c := cause(t, sv); c.Kind != Timeout {
		t.Errorf("cause %+v, want the lifetime", *c)
	}
	sv.Begin(func() StopResult { return adopted.Stop(time.Second) })
	res, _ := sv.End(nil)
	if res.Left != 0 {
		t.Errorf("stop: %+v", res)
	}
	select {
	case <-sv.Exited():
		t.Error("an end of a leader it does not have")
	default:
	}
	if st := <-r.Exited; st.Success() {
		t.Error("the adopted tree was not stopped")
	}
}
