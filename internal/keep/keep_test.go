package keep

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// TestHold: one holder a lock file, named in it while it holds it, listed
// then, and not once it lets go.
func TestHold(t *testing.T) {
	name := filepath.Join(t.TempDir(), "a.keeper")
	if Held(name) {
		t.Fatal("held before anyone held it")
	}
	l := Hold(name)
	if l == nil {
		t.Fatal("not held")
	}
	if Hold(name) != nil {
		t.Fatal("held twice")
	}
	l.Say("ready", "gopls /src")
	got := List(filepath.Join(filepath.Dir(name), "*.keeper"))
	if len(got) != 1 || got[0].Pid != os.Getpid() || got[0].State != "ready" || got[0].What != "gopls /src" {
		t.Fatalf("listed %+v", got)
	}
	l.Close()
	if Held(name) || len(List(filepath.Join(filepath.Dir(name), "*.keeper"))) != 0 {
		t.Fatal("held after it let go")
	}
}

// TestOwnerGone: this process is not gone; a pid that is not one is.
// Both of this process's reads of its start are on one thread: qemu-user,
// which runs the arm64 tests, writes each thread's own start time into
// /proc/self/stat, so that two threads of one process differ.
func TestOwnerGone(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if OwnerGone(Owner()) {
		t.Fatal("this process is gone")
	}
	if !OwnerGone("999999999 1") {
		t.Fatal("no such process, yet not gone")
	}
}
