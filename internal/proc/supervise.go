package proc

import (
	"context"
	"os"
	"sync/atomic"
	"time"
)

// Supervision is what a command's tree is held to, to its end: its
// resource limits and its time. A shell call's command and a job's keeper
// are supervised alike, each by a Supervisor.
type Supervision struct {
	Tree *Tree
	// Exited is the leader's end (Running.Exited); nil for a tree handed
	// over without its leader (an adopted job).
	Exited <-chan *os.ProcessState
	Limits Limits
	// Timeout and Idle hold while the leader runs: its time, and how long
	// it may go without output (LastOutput says when output last came).
	// Lifetime holds to the end, counted from Started. Zero: no limit.
	Timeout, Idle, Lifetime time.Duration
	Started                 time.Time
	LastOutput              func() time.Time
}

// Supervisor supervises one tree. It says the leader's end (Exited) and
// the first reason to stop the tree (Causes: the caller's context, a time
// limit, a resource limit); its owner, whose loop selects on these beside
// the tree's output, decides whether to stop and how (Begin), and the
// Supervisor runs that one stop. End says what the tree used.
type Supervisor struct {
	s       Supervision
	watch   *Watch
	exited  chan *os.ProcessState
	causes  chan *Cause
	caused  atomic.Bool
	end     chan struct{}
	done    chan struct{} // the timers' goroutine has returned
	stopped chan struct{} // closed once the stop Begin began is over

	// The owner's alone.
	stopping bool
	result   StopResult
}

// Supervise starts supervising s.Tree; ctx's end is a cause to stop it
// (CauseOf its cause). The owner calls End once it is done with the tree.
func Supervise(ctx context.Context, s Supervision) *Supervisor {
	sv := &Supervisor{s: s, exited: make(chan *os.ProcessState, 1), causes: make(chan *Cause, 1),
		end: make(chan struct{}), done: make(chan struct{}), stopped: make(chan struct{})}
	sv.watch = StartWatch(s.Tree, s.Limits, func(over error) { sv.cause(CauseOf(over)) })
	go sv.run(ctx)
	return sv
}

// cause hands the owner the first cause to stop the tree; later ones are
// dropped.
func (sv *Supervisor) cause(c *Cause) {
	if sv.caused.CompareAndSwap(false, true) {
		sv.causes <- c
	}
}

// timer is a timer's channel, nil (never ready) for no limit.
func timer(d time.Duration) (*time.Timer, <-chan time.Time) {
	if d <= 0 {
		return nil, nil
	}
	t := time.NewTimer(d)
	return t, t.C
}

// run watches the time limits, the caller's context and the leader's end.
func (sv *Supervisor) run(ctx context.Context) {
	defer close(sv.done)
	s := sv.s
	timeout, timeoutC := timer(s.Timeout)
	idle, idleC := timer(s.Idle)
	var lifetime *time.Timer
	var lifetimeC <-chan time.Time
	if s.Lifetime > 0 {
		// One already over fires at once.
		lifetime, lifetimeC = timer(max(time.Until(s.Started.Add(s.Lifetime)), time.Nanosecond))
	}
	for _, t := range []*time.Timer{timeout, idle, lifetime} {
		if t != nil {
			defer t.Stop()
		}
	}
	exited, ctxDone := s.Exited, ctx.Done()
	for {
		select {
		case st := <-exited:
			// The leader's time is over.
			exited, timeoutC, idleC = nil, nil, nil
			sv.exited <- st
		case <-ctxDone:
			ctxDone = nil
			sv.cause(CauseOf(context.Cause(ctx)))
		case <-timeoutC:
			sv.cause(&Cause{Kind: Timeout, After: s.Timeout})
		case <-idleC:
			// Output since the timer was set moves the limit on.
			if since := time.Since(s.LastOutput()); since < s.Idle {
				idle.Reset(s.Idle - since)
				continue
			}
			sv.cause(&Cause{Kind: Idle, After: s.Idle})
		case <-lifetimeC:
			sv.cause(&Cause{Kind: Timeout, After: s.Lifetime})
		case <-sv.end:
			return
		}
	}
}

// Exited gets the leader's end, once; never for a tree without a leader.
func (sv *Supervisor) Exited() <-chan *os.ProcessState { return sv.exited }

// Causes gets the first reason to stop the tree, once.
func (sv *Supervisor) Causes() <-chan *Cause { return sv.causes }

// Begin begins stopping the tree with stop, unless a stop has begun.
func (sv *Supervisor) Begin(stop func() StopResult) {
	if sv.stopping {
		return
	}
	sv.stopping = true
	go func() {
		sv.result = stop()
		close(sv.stopped)
	}()
}

// Stopping says a stop has begun.
func (sv *Supervisor) Stopping() bool { return sv.stopping }

// Stopped is closed once the stop that began is over; Result says how it
// went then.
func (sv *Supervisor) Stopped() <-chan struct{} { return sv.stopped }

// Result is how the stop went, once Stopped is closed.
func (sv *Supervisor) Result() StopResult { return sv.result }

// End ends the supervision, once a stop that began is over, and returns
// how that stop went and what the tree used. st is the leader's end, when
// it came.
func (sv *Supervisor) End(st *os.ProcessState) (StopResult, Usage) {
	close(sv.end)
	<-sv.done
	if sv.stopping {
		<-sv.stopped
	}
	return sv.result, sv.watch.Stop(st)
}
