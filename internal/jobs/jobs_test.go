package jobs

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestDirRefused: a state directory others may use, or that is not a
// directory, is refused; a new one is made 0700.
func TestDirRefused(t *testing.T) {
	base := t.TempDir()
	fresh := filepath.Join(base, "fresh")
	t.Setenv("TOOLKIT_STATE", fresh)
	if _, err := Dir(); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(fresh); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("made %v, %v", fi.Mode(), err)
	}

	open := filepath.Join(base, "open")
	if err := os.Mkdir(open, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(open, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TOOLKIT_STATE", open)
	if _, err := Dir(); err == nil || !strings.Contains(err.Error(), "is open to other users (mode 0755); it must be 0700") {
		t.Fatalf("a 0755 directory: %v", err)
	}

	link := filepath.Join(base, "link")
	if err := os.Symlink(fresh, link); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TOOLKIT_STATE", link)
	if _, err := Dir(); err == nil || !strings.Contains(err.Error(), "is not a directory") {
		t.Fatalf("a link: %v", err)
	}

	if os.Geteuid() == 0 {
		theirs := filepath.Join(base, "theirs")
		if err := os.Mkdir(theirs, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(theirs, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		t.Setenv("TOOLKIT_STATE", theirs)
		if _, err := Dir(); err == nil || !strings.Contains(err.Error(), "belongs to user 65534") {
			t.Fatalf("another user's directory: %v", err)
		}
	}
}

// TestLogCapped: the keeper's log stops at its bound and says so, and the
// keeper reads on to the end, so that the job never blocks on a full pipe.
func TestLogCapped(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	log, err := os.Create(filepath.Join(t.TempDir(), "log"))
	if err != nil {
		t.Fatal(err)
	}
	k := &keeper{out: r, log: log, maxLog: 1000}
	done := make(chan struct{})
	go k.copyOutput(done)
	// 1 MiB, far more than the pipe holds: the write ends only if the keeper
	// reads on past its bound.
	if _, err := io.Copy(w, bytes.NewReader(bytes.Repeat([]byte("x"), 1<<20))); err != nil {
		t.Fatal(err)
	}
	w.Close()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the keeper did not read to the end")
	}
	b, _ := os.ReadFile(log.Name())
	if !bytes.HasPrefix(b, bytes.Repeat([]byte("x"), 1000)) || !bytes.HasSuffix(b, []byte("keeps its first 1000 bytes]\n")) || len(b) > 1100 {
		t.Fatalf("log of %d bytes: %q", len(b), b[min(len(b), 990):])
	}
	if k.total.Load() != 1<<20 || !k.logFull.Load() {
		t.Fatalf("counted %d bytes, log full %v", k.total.Load(), k.logFull.Load())
	}
}

// TestSweep: a record goes once its end was shown and Keep has passed, not
// before, and never while the job runs.
func TestSweep(t *testing.T) {
	state := t.TempDir()
	long := time.Now().Add(-2 * Keep)
	records := map[string]struct {
		status Status
		seen   Seen
		stays  bool
	}{
		"a1": {Status{State: Ended, Ended: long}, Seen{EndShown: long}, false},
		"a2": {Status{State: Ended, Ended: long}, Seen{}, true},                              // never shown
		"a3": {Status{State: Ended, Ended: time.Now()}, Seen{EndShown: time.Now()}, true},    // shown just now
		"a4": {Status{State: Running, Keeper: os.Getpid()}, Seen{EndShown: long}, true},      // still running
		"a5": {Status{State: Ended, Ended: long.Add(Keep / 2)}, Seen{EndShown: long}, false}, // both long ago
	}
	for id, r := range records {
		dir := filepath.Join(state, "jobs", id)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := writeJSON(filepath.Join(dir, "status.json"), r.status); err != nil {
			t.Fatal(err)
		}
		if err := writeJSON(filepath.Join(dir, "look.json"), r.seen); err != nil {
			t.Fatal(err)
		}
	}
	Sweep(state)
	for id, r := range records {
		_, err := os.Stat(filepath.Join(state, "jobs", id))
		if stays := err == nil; stays != r.stays {
			t.Errorf("%s: stays %v, want %v", id, stays, r.stays)
		}
	}
}

// TestSessionSaved: what a session's shell saves whole is taken in; a save
// cut short (a kill in the middle) is not, and the last whole one stays.
func TestSessionSaved(t *testing.T) {
	file := filepath.Join(t.TempDir(), "s")
	write := func(s string) {
		if err := os.WriteFile(file+".new", []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("/src\nexport A='1'\n" + sessionEnd + "\n")
	s, err := FinishSession(file)
	if err != nil || s.Cwd != "/src" || s.Env != "export A='1'\n" {
		t.Fatalf("%+v %v", s, err)
	}
	write("/elsewhere\nexport A='2'\n")
	s, err = FinishSession(file)
	if err != nil || s.Cwd != "/src" || s.Env != "export A='1'\n" {
		t.Fatalf("a save cut short was taken: %+v %v", s, err)
	}
	if _, err := os.Stat(file + ".new"); !os.IsNotExist(err) {
		t.Fatalf("the cut-short save is still there: %v", err)
	}
	// The script exports the session's variables, then the call's, which
	// win.
	script := SessionScript("echo hi", s, map[string]string{"A": "it's 3"}, file)
	if !strings.HasPrefix(script, "export A='1'\nexport A='it'\\''s 3'\n") || !strings.HasSuffix(script, "\necho hi\n") {
		t.Fatalf("%q", script)
	}
}

func TestValidID(t *testing.T) {
	for id, want := range map[string]bool{"3f2a": true, "3f2a9c01": true, "": false, "../x": false, "3F2A": false, "3f2g": false, "0123456789abcdef0": false} {
		if ValidID(id) != want {
			t.Errorf("ValidID(%q) = %v", id, !want)
		}
	}
}
