package edit

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"toolkit/internal/outcome"
	"toolkit/internal/replace"
)

// TestNoLostUpdate: 1000 edits race with each other and with a writer on
// one file. Each edit adds a "#" before the end marker, each of the
// writer's writes a "w" line; an edit that read the file before another
// change landed must fail as a conflict, never write over it. At the end the
// file holds exactly one "#" per edit that succeeded and one "w" per write.
func TestNoLostUpdate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f.txt")
	if err := os.WriteFile(path, []byte("<END>\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	const editors, each, writes = 4, 250, 200
	var mu sync.Mutex
	done, conflicts, writesDone := 0, 0, 0
	var wg sync.WaitGroup
	for range editors {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				o := Run(t.Context(), Args{Path: path, Edits: []Edit{{OldText: "<END>", NewText: "#<END>"}}})
				mu.Lock()
				switch {
				case o.Kind == outcome.Done:
					done++
				case strings.Contains(o.Message, "changed while it was edited"):
					conflicts++
				default:
					t.Errorf("edit: %s", o.Message)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		// The writer appends a line, on the condition that the file is what
		// it read: write with if_match.
		for range writes {
			old, err := os.ReadFile(path)
			if err != nil {
				t.Error(err)
				return
			}
			sum := sha256.Sum256(old)
			staged, err := replace.Stage(nil, path, func(w io.Writer) error {
				_, err := w.Write(append(append([]byte(nil), old...), "w\n"...))
				return err
			})
			if err != nil {
				t.Error(err)
				return
			}
			if _, err := staged.Commit(replace.Expect{SHA256: hex.EncodeToString(sum[:])}); err == nil {
				mu.Lock()
				writesDone++
				mu.Unlock()
			}
		}
	}()
	wg.Wait()
	got, _ := os.ReadFile(path)
	hashes, ws := bytes.Count(got, []byte("#")), bytes.Count(got, []byte("w\n"))
	t.Logf("%d edits done, %d conflicts; %d writes done", done, conflicts, writesDone)
	if hashes != done || ws != writesDone {
		t.Fatalf("the file holds %d # for %d edits done and %d w for %d writes: updates were lost", hashes, done, ws, writesDone)
	}
	if done == 0 {
		t.Fatal("no edit succeeded")
	}
}

// TestLongLineDiff: six bytes edited in the middle of a 10 MiB line answer
// with the change and 2,000 characters around it on each side, each cut
// line saying how much it left out; the file gets the whole line.
func TestLongLineDiff(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "long.txt")
	line := strings.Repeat("a", 5<<20) + "needle" + strings.Repeat("b", 5<<20)
	if err := os.WriteFile(path, []byte("first\n"+line+"\nlast\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	o := Run(t.Context(), Args{Path: path, Edits: []Edit{{OldText: "needle", NewText: "pinned"}}})
	if o.Kind != outcome.Done {
		t.Fatal(o.Message)
	}
	if len(o.Text) > 10<<10 {
		t.Fatalf("the answer is %d bytes", len(o.Text))
	}
	for _, want := range []string{"-[… 5242380 characters] aaa", "aneedlebbb", "+[… 5242380 characters] aaa", "apinnedbbb", "… [line cut: 5241386 characters]\n"} {
		if !strings.Contains(o.Text, want) {
			t.Fatalf("no %q in the answer:\n%.3000s", want, o.Text)
		}
	}
	got, _ := os.ReadFile(path)
	if want := "first\n" + strings.Replace(line, "needle", "pinned", 1) + "\nlast\n"; string(got) != want {
		t.Fatal("the file is not the line edited")
	}
}
