package proc

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// inChild runs the test named in a child test process, with step in its
// environment, and returns how it ended and what it wrote.
func inChild(t *testing.T, name, step string) (*os.ProcessState, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+name+"$", "-test.v")
	cmd.Env = append(os.Environ(), "TOOLKIT_TEST_SIGNALS="+step)
	out, _ := cmd.CombinedOutput()
	return cmd.ProcessState, string(out)
}

// TestStopSignals: a stop signal goes to the call that listens (from a
// command started at once), and where none does (before a call listens,
// after it stops) it ends toolkit as it would uncaught. Each case runs in
// a child test process.
func TestStopSignals(t *testing.T) {
	if step := os.Getenv("TOOLKIT_TEST_SIGNALS"); step != "" {
		Harden()
		self := func(s syscall.Signal) {
			_ = syscall.Kill(os.Getpid(), s)
			time.Sleep(2 * time.Second) // the signal ends the process before this does
		}
		switch step {
		case "none":
			Caught()
			self(syscall.SIGTERM)
		case "listened":
			// A command started at once after Listen: Start waits for
			// the catching to be in place, and the command's signal to
			// toolkit reaches the listener.
			ch := make(chan os.Signal, 1)
			stop := Listen(ch)
			cmd := exec.Command("/bin/sh", "-c", "kill -INT $PPID")
			if err := Start(cmd); err != nil {
				os.Stdout.WriteString(err.Error() + "\n")
			}
			_ = cmd.Wait()
			Done(cmd)
			select {
			case s := <-ch:
				os.Stdout.WriteString("got " + s.String() + "\n")
			case <-time.After(10 * time.Second):
				os.Stdout.WriteString("none came\n")
			}
			stop()
			self(syscall.SIGHUP)
		}
		return
	}
	state, out := inChild(t, "TestStopSignals", "none")
	if ws := state.Sys().(syscall.WaitStatus); !ws.Signaled() || ws.Signal() != syscall.SIGTERM {
		t.Errorf("SIGTERM with nothing listening: the child ended %v, not by SIGTERM\n%s", state, out)
	}
	state, out = inChild(t, "TestStopSignals", "listened")
	if !strings.Contains(out, "got interrupt") {
		t.Errorf("SIGINT did not reach the listener:\n%s", out)
	}
	if ws := state.Sys().(syscall.WaitStatus); !ws.Signaled() || ws.Signal() != syscall.SIGHUP {
		t.Errorf("SIGHUP after the listener stopped: the child ended %v, not by SIGHUP\n%s", state, out)
	}
}

// TestSIGPIPECaught: once Caught returns, a write to a closed stdout is an
// error (EPIPE), not the end of the process.
func TestSIGPIPECaught(t *testing.T) {
	if os.Getenv("TOOLKIT_TEST_SIGNALS") == "pipe" {
		Harden()
		Caught()
		_, err := os.Stdout.WriteString("into a closed pipe\n")
		if errors.Is(err, syscall.EPIPE) {
			os.Stderr.WriteString("write: EPIPE\n")
		}
		os.Exit(7)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestSIGPIPECaught$")
	cmd.Env = append(os.Environ(), "TOOLKIT_TEST_SIGNALS=pipe")
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r.Close() // the reader gone before the child writes
	cmd.Stdout = w
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err = cmd.Run()
	w.Close()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 7 {
		t.Fatalf("the child ended %v, not with status 7 after its write failed\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "write: EPIPE") {
		t.Fatalf("stderr %q", stderr.String())
	}
}
