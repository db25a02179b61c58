package proc

import (
	"os"
	"os/signal"
	"slices"
	"sync"
	"syscall"
)

// stopSignals are the signals that stop a call or a server: SIGTERM, SIGINT
// and SIGHUP.
var stopSignals = []os.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP}

// The catcher: one process-wide handler of SIGPIPE and the stop signals,
// which hands each stop signal to whoever listens. Each signal that Go
// starts or stops catching is a round trip to the runtime's signal thread
// (a call caught five and let three go: 0.25-0.85 ms in all, measured in a
// fresh process on a 2-CPU machine), so it is done once, begun early
// (Harden) and waited for only where it must be in place: before a
// command starts (Start) and before an outcome is written (Caught). A
// call's listening is a lock, not a signal.Notify.
var catcher struct {
	begin     sync.Once
	caught    chan struct{} // closed once the signals are caught
	mu        sync.Mutex
	listeners []chan<- os.Signal
}

// beginCatching begins catching the signals, once, in a goroutine of its
// own.
func beginCatching() {
	catcher.begin.Do(func() {
		catcher.caught = make(chan struct{})
		go func() {
			// Caught, SIGPIPE never ends toolkit: a write to a closed
			// output is an error (EPIPE) instead.
			signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
			ch := make(chan os.Signal, 4)
			signal.Notify(ch, stopSignals...)
			close(catcher.caught)
			forward(ch)
		}()
	})
}

// forward hands each stop signal to the listeners, and where there are
// none does what the signal would have done uncaught.
func forward(ch <-chan os.Signal) {
	for s := range ch {
		catcher.mu.Lock()
		to := slices.Clone(catcher.listeners)
		catcher.mu.Unlock()
		if len(to) == 0 {
			// Its own disposition back (ended by it, or ignored where
			// toolkit was started with it ignored), and sent again.
			signal.Reset(s)
			_ = syscall.Kill(os.Getpid(), s.(syscall.Signal))
			continue
		}
		for _, l := range to {
			select {
			case l <- s:
			default: // one already waits there
			}
		}
	}
}

// Listen hands SIGTERM, SIGINT and SIGHUP to ch (as signal.Notify would,
// never blocking on it) until the function it returns is called. A stop
// signal that comes while nothing listens ends toolkit, as it would have
// uncaught; so does one that comes before the catching is in place, which
// Caught waits for (Start does).
func Listen(ch chan<- os.Signal) (stop func()) {
	beginCatching()
	catcher.mu.Lock()
	catcher.listeners = append(catcher.listeners, ch)
	catcher.mu.Unlock()
	return func() {
		catcher.mu.Lock()
		defer catcher.mu.Unlock()
		if i := slices.Index(catcher.listeners, ch); i >= 0 {
			catcher.listeners = slices.Delete(catcher.listeners, i, i+1)
		}
	}
}

// Caught waits until SIGPIPE and the stop signals are caught: before a
// command starts, and before a write that must not end toolkit.
func Caught() {
	beginCatching()
	<-catcher.caught
}
