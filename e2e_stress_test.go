package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// full says whether the stress runs go at full size: not under -short, nor
// under -race, where each toolkit is many times slower.
func full() bool { return !testing.Short() && !raceBuild }

// inSession counts the live processes in session sid.
func inSession(sid int) int {
	n := 0
	names, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, name := range names {
		b, err := os.ReadFile(name)
		if err != nil {
			continue
		}
		i := bytes.LastIndexByte(b, ')')
		if i < 0 || i+2 >= len(b) {
			continue
		}
		f := strings.Fields(string(b[i+2:]))
		if len(f) > 3 && f[0] != "Z" && f[0] != "X" && f[3] == strconv.Itoa(sid) {
			n++
		}
	}
	return n
}

// The command every stop stops: helpers of every kind, one that ignores
// SIGTERM, each a sleep called through a link whose name is the marker.
const treeScript = `
m="$1"
( "$m" 301 & wait ) &
( ( "$m" 302 & ) & )
setsid "$m" 303 &
env -i setsid "$m" 304 &
( trap "" TERM; "$m" 305 ) &
echo $$ > sid
while [ "$(ps -eo args 2>/dev/null | grep -c "^$m 30")" -lt 5 ]; do :; done
touch ready
"$m" 306
`

// TestStops: stops of process trees that fork, in every way a stop comes
// (timeout, idle stop, SIGTERM and SIGINT to toolkit), leave nothing running:
// no process with the marker in its arguments, none in the command's session.
func TestStops(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc to count processes with")
	}
	runs := 24
	if full() {
		runs = 200
	}
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip(err)
	}
	kinds := []string{"timeout", "idle", "SIGTERM", "SIGINT"}
	var mu sync.Mutex
	tally := map[string]int{}
	left := 0
	sem := make(chan struct{}, 6)
	var wg sync.WaitGroup
	for i := range runs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			kind := kinds[i%len(kinds)]
			dir := t.TempDir()
			marker := filepath.Join(dir, fmt.Sprintf("stress-marker-%d", i))
			if err := os.Symlink(sleep, marker); err != nil {
				t.Error(err)
				return
			}
			if err := os.WriteFile(filepath.Join(dir, "tree.sh"), []byte(treeScript), 0o644); err != nil {
				t.Error(err)
				return
			}
			args := []string{"shell", "--cwd", dir, "--grace", "100ms"}
			switch kind {
			case "timeout":
				args = append(args, "--timeout", "1")
			case "idle":
				args = append(args, "--idle", "300ms")
			}
			cmd := toolkitCmd(append(args, "sh tree.sh "+marker)...)
			var out bytes.Buffer
			cmd.Stdout = &out
			if err := cmd.Start(); err != nil {
				t.Error(err)
				return
			}
			if kind == "SIGTERM" || kind == "SIGINT" {
				deadline := time.Now().Add(20 * time.Second)
				for {
					if _, err := os.Stat(filepath.Join(dir, "ready")); err == nil {
						break
					}
					if time.Now().After(deadline) {
						t.Errorf("run %d: the helpers did not start", i)
						return
					}
					time.Sleep(5 * time.Millisecond)
				}
				sig := syscall.SIGTERM
				if kind == "SIGINT" {
					sig = syscall.SIGINT
				}
				_ = cmd.Process.Signal(sig)
			}
			if err := cmd.Wait(); err != nil {
				t.Errorf("run %d (%s): %v: %s", i, kind, err, out.String())
				return
			}
			// Mostly the helper that ignores SIGTERM is there and must be
			// killed; on a slow machine a timeout or idle stop may come
			// before it was started. Either way nothing may be left.
			if !strings.Contains(out.String(), "; killed after 0.1 s without an answer to SIGTERM]") &&
				!strings.Contains(out.String(), "; terminated]") {
				t.Errorf("run %d (%s): not stopped: %q", i, kind, out.String())
			}
			if strings.Contains(out.String(), "; killed after") {
				mu.Lock()
				tally["killed"]++
				mu.Unlock()
			}
			sidb, _ := os.ReadFile(filepath.Join(dir, "sid"))
			sid, _ := strconv.Atoi(strings.TrimSpace(string(sidb)))
			n := len(marked(marker))
			if sid > 0 {
				n += inSession(sid)
			}
			mu.Lock()
			tally[kind]++
			left += n
			mu.Unlock()
			if n > 0 {
				killMarked(marker)
			}
		}()
	}
	wg.Wait()
	t.Logf("%d stops of forking trees (%v; killed: after the grace): %d processes left", runs, tally, left)
	if left != 0 {
		t.Fatalf("%d processes outlived their stop", left)
	}
}

// TestManyAtOnce: toolkit processes at once, each printing about 10 MiB:
// every outcome complete and correct, and every spill file the whole output.
func TestManyAtOnce(t *testing.T) {
	t.Parallel()
	n := 6
	if full() {
		n = 50
	}
	const last = 1500000 // seq 1 1500000: 10,888,896 bytes
	want, err := exec.Command("seq", "1", strconv.Itoa(last)).Output()
	if err != nil {
		t.Skip(err)
	}
	wantSum := sha256.Sum256(want)
	tmp := t.TempDir()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := toolkitCmd("shell", "--json", "seq 1 "+strconv.Itoa(last))
			cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
			out, err := cmd.Output()
			if err != nil {
				errs <- fmt.Errorf("process %d: %v", i, err)
				return
			}
			errs <- checkSeqOutcome(out, want, wantSum, last)
		}()
	}
	wg.Wait()
	close(errs)
	bad := 0
	for err := range errs {
		if err != nil {
			bad++
			t.Error(err)
		}
	}
	t.Logf("%d toolkit processes at once, each printing %d bytes: %d complete and correct", n, len(want), n-bad)
}

func checkSeqOutcome(out, want []byte, wantSum [32]byte, last int) error {
	var o struct {
		OK          bool   `json:"ok"`
		Text        string `json:"text"`
		ExitCode    *int   `json:"exit_code"`
		OutputBytes int64  `json:"output_bytes"`
		OutputLines int64  `json:"output_lines"`
		Cut         *struct {
			KeptBytes    int64  `json:"kept_bytes"`
			DroppedBytes int64  `json:"dropped_bytes"`
			SpillPath    string `json:"spill_path"`
		} `json:"cut"`
	}
	if err := json.Unmarshal(out, &o); err != nil {
		return fmt.Errorf("outcome %.200q: %v", out, err)
	}
	if !o.OK || o.ExitCode == nil || *o.ExitCode != 0 || o.OutputBytes != int64(len(want)) || o.OutputLines != int64(last) || o.Cut == nil {
		return fmt.Errorf("outcome facts wrong: %.300s", out)
	}
	if o.Cut.KeptBytes+o.Cut.DroppedBytes != int64(len(want)) {
		return fmt.Errorf("kept %d + dropped %d != %d", o.Cut.KeptBytes, o.Cut.DroppedBytes, len(want))
	}
	// The text: lines 1..h, the middle line, lines t..last, the cut line, [exit 0].
	lines := strings.Split(strings.TrimSuffix(o.Text, "\n"), "\n")
	next := 1
	i := 0
	for ; i < len(lines) && !strings.HasPrefix(lines[i], "["); i++ {
		if lines[i] != strconv.Itoa(next) {
			return fmt.Errorf("head line %d is %q", next, lines[i])
		}
		next++
	}
	head := next - 1
	if i >= len(lines) || !strings.HasPrefix(lines[i], fmt.Sprintf("[… lines %d-", head+1)) {
		return fmt.Errorf("no middle line after line %d", head)
	}
	i++
	first, err := strconv.Atoi(lines[i])
	if err != nil {
		return fmt.Errorf("tail starts %q", lines[i])
	}
	for next = first; i < len(lines) && !strings.HasPrefix(lines[i], "["); i++ {
		if lines[i] != strconv.Itoa(next) {
			return fmt.Errorf("tail line %d is %q", next, lines[i])
		}
		next++
	}
	if next-1 != last || i+2 != len(lines) || lines[i+1] != "[exit 0]" {
		return fmt.Errorf("the text ends %q", lines[i:])
	}
	if want := fmt.Sprintf("[output cut: showed lines 1-%d and %d-%d of %d (10.4 MiB); the whole output is in %s, kept for 1 h or until ", head, first, last, last, o.Cut.SpillPath); !strings.HasPrefix(lines[i], want) || !strings.HasSuffix(lines[i], " of newer output]") {
		return fmt.Errorf("cut line %q, want %q", lines[i], want)
	}
	spilled, err := os.ReadFile(o.Cut.SpillPath)
	if err != nil {
		return err
	}
	if sha256.Sum256(spilled) != wantSum {
		return fmt.Errorf("the spill file is not the whole output (%d bytes)", len(spilled))
	}
	return nil
}
