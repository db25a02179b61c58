package proc

import (
	"os/exec"
	"strings"
	"testing"
)

// TestQuote: an argv joined with quote is the same argv to sh.
func TestQuote(t *testing.T) {
	args := []string{"plain", "", "two words", "it's", `"$HOME"`, "a\nb", "*", "-x=1"}
	var q []string
	for _, a := range args {
		q = append(q, Quote(a))
	}
	out, err := shWords(strings.Join(q, " "))
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.Join(args, "\x00") + "\x00"; out != want {
		t.Fatalf("got %q, want %q", out, want)
	}
}

// shWords runs printf '%s\0' with the words of command, as sh splits them.
// It starts sh through Start, as every child of this package's tests must
// be started: the reaper another test may have started collects any other.
func shWords(command string) (string, error) {
	cmd := exec.Command("sh", "-c", `printf '%s\0' `+command)
	var out strings.Builder
	cmd.Stdout = &out
	if err := Start(cmd); err != nil {
		return "", err
	}
	err := cmd.Wait()
	Done(cmd)
	return out.String(), err
}
