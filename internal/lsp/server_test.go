package lsp

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"toolkit/testsupport/fakelsp"
)

func TestMain(m *testing.M) {
	if os.Getenv("FAKELSP") == "1" {
		fakelsp.Main()
	}
	os.Exit(m.Run())
}

// fake starts the test binary as the fake server, in mode.
func fake(t *testing.T, mode string) *Server {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	s, err := Start("fake", []string{exe}, t.TempDir(), append(os.Environ(), "FAKELSP=1", "FAKELSP_MODE="+mode), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close(time.Second) })
	return s
}

func messages(r Result) string {
	var ms []string
	for _, d := range r.Diagnostics {
		ms = append(ms, d.Message)
	}
	return strings.Join(ms, "; ")
}

// TestFresh: each answer is of the text sent, whatever the server's mode:
// a stale publish of the version before, a burst whose first publish
// finds nothing, pulls only.
func TestFresh(t *testing.T) {
	for _, mode := range []string{"", "stale", "burst", "pull", "slow=200ms,stale", "noversion", "noversion,stale,slow=100ms"} {
		t.Run(mode, func(t *testing.T) {
			s := fake(t, mode)
			if mode == "burst" {
				s.Settle = 300 * time.Millisecond
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			path := filepath.Join(s.root, "a.txt")
			for i, tc := range []struct{ text, want string }{
				{"ok\nERROR one\n", "ERROR one"},
				{"ok\nERROR one\nERROR two\n", "ERROR one; ERROR two"},
				{"fixed\n", ""},
				{"fixed\n", ""}, // the same text: answered from what the server said
				{"ERROR three\n", "ERROR three"},
			} {
				r, err := s.Diagnose(ctx, path, "plaintext", tc.text)
				if err != nil || messages(r) != tc.want {
					t.Fatalf("text %d: %q, %v; want %q", i, messages(r), err, tc.want)
				}
			}
		})
	}
}

// TestNeverStale: a server that never publishes, or publishes only the
// version before the change, is never taken at its word: the wait ends at
// its deadline, with no answer.
func TestNeverStale(t *testing.T) {
	for _, mode := range []string{"silent", "staleonly"} {
		t.Run(mode, func(t *testing.T) {
			s := fake(t, mode)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			path := filepath.Join(s.root, "a.txt")
			if mode == "staleonly" {
				// Opened, then changed: only the open's text is published.
				if _, err := s.Diagnose(ctx, path, "plaintext", "ERROR old\n"); err != nil {
					t.Fatal(err)
				}
			}
			ctx, cancel = context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			r, err := s.Diagnose(ctx, path, "plaintext", "ERROR\n")
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("%s: %q, %v; want no answer by the deadline", mode, messages(r), err)
			}
		})
	}
}

// TestLoadingAndGone: a server still initializing is said to be loading
// at the deadline; one that crashes is said gone, not clean.
func TestLoadingAndGone(t *testing.T) {
	s := fake(t, "init=5s")
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if _, err := s.Diagnose(ctx, filepath.Join(s.root, "a.txt"), "plaintext", "x\n"); !errors.Is(err, ErrLoading) {
		t.Fatalf("loading: %v", err)
	}
	s = fake(t, "crash")
	ctx, cancel = context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	path := filepath.Join(s.root, "a.txt")
	if _, err := s.Diagnose(ctx, path, "plaintext", "x\n"); err != nil {
		t.Fatalf("open: %v", err)
	}
	if _, err := s.Diagnose(ctx, path, "plaintext", "ERROR\n"); !errors.Is(err, ErrGone) {
		t.Fatalf("crash: %v", err)
	}
}

// TestPublishedElsewhere: what a server publishes for other files is kept,
// by path.
func TestPublishedElsewhere(t *testing.T) {
	s := fake(t, "")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := s.Diagnose(ctx, filepath.Join(s.root, "a.txt"), "plaintext", "BREAKS b.txt\n"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if ds := s.Published()[URI(filepath.Join(s.root, "b.txt"))].Diagnostics; len(ds) == 1 && ds[0].Message == "broken by a.txt" {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("published: %v", s.Published())
}

func TestByteColumn(t *testing.T) {
	line := "a😀b"
	for _, tc := range []struct {
		char  int
		utf16 bool
		want  int
	}{{0, true, 0}, {1, true, 1}, {3, true, 5}, {4, true, 6}, {5, false, 5}, {99, true, 6}} {
		if got := ByteColumn(line, tc.char, tc.utf16); got != tc.want {
			t.Errorf("ByteColumn(%q, %d, %v) = %d, want %d", line, tc.char, tc.utf16, got, tc.want)
		}
	}
}

// FuzzByteColumn: a server's column, whatever it says, is a byte offset
// in the line.
func FuzzByteColumn(f *testing.F) {
	f.Add("a😀b", 3, true)
	f.Add("\xff\xfe", 1, false)
	f.Fuzz(func(t *testing.T, line string, char int, utf16 bool) {
		if c := ByteColumn(line, char, utf16); c < 0 || c > len(line) {
			t.Fatalf("ByteColumn(%q, %d, %v) = %d", line, char, utf16, c)
		}
	})
}
