package log

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLastCall: the last call of the log is read from its end: past a
// torn last line, past lines longer than the end first read, and 0 for a
// log with none or none at all.
func TestLastCall(t *testing.T) {
	long := `{"call":7,"files":[` + strings.Repeat(`{"path":"x"},`, 20_000) + `{"path":"y"}]}` + "\n"
	for _, tc := range []struct {
		name, log string
		want      int64
	}{
		{"no log", "", 0},
		{"one line", `{"call":3,"tree":"/w"}` + "\n", 3},
		{"a torn last line", `{"call":3,"tree":"/w"}` + "\n" + `{"call":4,"tr`, 3},
		{"a line longer than the end read", `{"call":6}` + "\n" + long, 7},
		{"after a long line", long + `{"call":8,"end":"x"}` + "\n", 8},
		{"nothing whole", `{"call":9`, 0},
		{"not a log line last", `{"call":5}` + "\n" + "garbage\n", 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if tc.log != "" {
				if err := os.WriteFile(filepath.Join(dir, "calls.jsonl"), []byte(tc.log), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if got := LastCall(dir); got != tc.want {
				t.Fatalf("LastCall = %d, want %d", got, tc.want)
			}
		})
	}
	// As Append writes them.
	dir := t.TempDir()
	for n := range int64(30) {
		if err := Append(dir, Record{Call: n + 1, Tree: fmt.Sprintf("/t%d", n)}); err != nil {
			t.Fatal(err)
		}
	}
	if got := LastCall(dir); got != 30 {
		t.Fatalf("after 30 appends: %d", got)
	}
}
