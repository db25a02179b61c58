package read

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"toolkit/internal/outcome"
)

func intp(n int) *int { return &n }

// shown returns the numbered lines of a read, without the closing lines.
func shown(o outcome.Outcome) string {
	var keep []string
	for _, l := range strings.SplitAfter(o.Text, "\n") {
		if l != "" && !strings.HasPrefix(l, "[") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "")
}

// TestOracleCatN: for plain text files, the lines shown are those of
// cat -n FILE | sed -n 'A,Bp', line for line.
func TestOracleCatN(t *testing.T) {
	if _, err := exec.LookPath("sed"); err != nil {
		t.Skip("no sed")
	}
	rng := rand.New(rand.NewPCG(7, 8))
	dir := t.TempDir()
	words := []string{"alpha", "beta", "γάμμα", "δ", "tab\there", "  indented", "", "x"}
	for i := range 20 {
		var b strings.Builder
		lines := 1 + rng.IntN(300)
		for range lines {
			for range rng.IntN(6) {
				b.WriteString(words[rng.IntN(len(words))])
				b.WriteByte(' ')
			}
			b.WriteByte('\n')
		}
		path := filepath.Join(dir, fmt.Sprintf("f%d.txt", i))
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		first := 1 + rng.IntN(lines)
		limit := 1 + rng.IntN(lines)
		last := first + limit - 1
		want, err := exec.Command("sh", "-c", fmt.Sprintf("cat -n %s | sed -n '%d,%dp'", path, first, last)).Output()
		if err != nil {
			t.Fatal(err)
		}
		o := Run(t.Context(), Args{Path: path, Offset: intp(first), Limit: intp(limit)})
		if o.Kind != outcome.Done {
			t.Fatalf("%s: %s", path, o.Message)
		}
		if got := shown(o); got != string(want) {
			t.Fatalf("%s lines %d-%d:\n got %q\nwant %q", path, first, last, got, want)
		}
	}
}

// TestSocketRefused: a socket is a tool error, at once.
func TestSocketRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sock")
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Skip(err)
	}
	defer l.Close()
	o := Run(t.Context(), Args{Path: path})
	if o.Kind != outcome.ToolError || o.Message != path+": not a regular file" {
		t.Fatalf("got %+v", o)
	}
}

// TestSwapForFIFO: a file swapped for a FIFO with no writer while reads run
// never makes a read hang: each one shows the file or refuses the FIFO.
func TestSwapForFIFO(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	file, fifo := filepath.Join(dir, "file"), filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip(err)
	}
	if err := os.WriteFile(file, []byte("text\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	swapped := make(chan struct{})
	go func() {
		defer close(swapped)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			src := file
			if i%2 == 1 {
				src = fifo
			}
			os.Remove(path)
			_ = os.Link(src, path)
		}
	}()
	defer func() { close(stop); <-swapped }()
	seen := map[string]int{}
	for range 500 {
		done := make(chan outcome.Outcome, 1)
		go func() { done <- Run(t.Context(), Args{Path: path}) }()
		select {
		case o := <-done:
			switch {
			case o.Kind == outcome.Done && shown(o) == "     1\ttext\n":
				seen["file"]++
			case o.Kind == outcome.ToolError && strings.HasSuffix(o.Message, "not a regular file"):
				seen["fifo"]++
			case o.Kind == outcome.ToolError && strings.HasSuffix(o.Message, "no such file"):
				seen["gone"]++
			default:
				t.Fatalf("unexpected outcome %+v", o)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("a read hung")
		}
	}
	t.Logf("outcomes: %v", seen)
}

// TestCancelled: a read takes the call's context: once it is cancelled,
// the read stops and says why.
func TestCancelled(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f.txt")
	if err := os.WriteFile(path, []byte(strings.Repeat("a line of text\n", 1<<20)), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancelCause(t.Context())
	cancel(errors.New("the call was cancelled"))
	for _, offset := range []int{1, -10} {
		o := Run(ctx, Args{Path: path, Offset: &offset})
		if o.Kind != outcome.ToolError || o.Message != path+": stopped: the call was cancelled" {
			t.Fatalf("offset %d: %v %q", offset, o.Kind, o.Message)
		}
	}
}
