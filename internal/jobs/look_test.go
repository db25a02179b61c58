package jobs

import (
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
)

// TestMatcherStreams: until is matched a line at a time as the log is
// read in blocks, so a look's memory does not grow with the log (a 100 MB
// log once took 362 MB to look for a word it never held); a line is found
// across blocks, at its bound, and the line being written counts.
func TestMatcherStreams(t *testing.T) {
	dir := t.TempDir()
	j := &Job{Dir: dir}
	write := func(s string) {
		f, err := os.OpenFile(filepath.Join(dir, "log"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteString(s); err != nil {
			t.Fatal(err)
		}
	}
	line := strings.Repeat("x", 99) + "\n"
	for range 64 {
		write(strings.Repeat(line, 10_000)) // 64 MB in all
	}
	m := matcher{re: regexp.MustCompile("NEVER")}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	if m.match(j) {
		t.Fatal("matched what the log does not hold")
	}
	runtime.ReadMemStats(&after)
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 4<<20 && !raceBuild {
		t.Errorf("looking through 64 MB took %d MB of allocations", grew>>20)
	}
	if m.at != 64*10_000*100 {
		t.Fatalf("read %d bytes of the log", m.at)
	}

	// A word split between two blocks, then a prompt with no line end.
	write(strings.Repeat("a", 1000) + "\n" + strings.Repeat("y", blockSize-1006) + "ready")
	write(" now\nname? ") // the first block ends after "ready"
	m2 := matcher{re: regexp.MustCompile("ready now"), at: m.at}
	if !m2.match(j) {
		t.Error("a line across two blocks was not matched")
	}
	m3 := matcher{re: regexp.MustCompile(`name\? $`), at: m.at}
	if !m3.match(j) {
		t.Error("the line being written was not matched")
	}
	// A line longer than the bound: matched on its first maxMatchLine
	// bytes only, then dropped to its end.
	write("\n" + strings.Repeat("z", maxMatchLine+10) + "TAIL\nafter\n")
	m4 := matcher{re: regexp.MustCompile("TAIL"), at: m3.at}
	if m4.match(j) {
		t.Error("a long line was matched past its bound")
	}
	m5 := matcher{re: regexp.MustCompile("^after$"), at: m3.at}
	if !m5.match(j) {
		t.Error("the line after a long one was not matched")
	}
}
