package outcome

import (
	"bytes"
	"testing"
)

type details struct {
	Path  string `json:"path"`
	Lines int    `json:"lines"`
}

func TestPrint(t *testing.T) {
	seven := 7
	for name, tc := range map[string]struct {
		o              Outcome
		mode           Mode
		stdout, stderr string
		status         int
	}{
		"done text":       {Success("hello\n", details{"a", 1}), TextMode, "hello\n", "", 0},
		"done json":       {Success("<&>\n", details{"a", 1}), JSONMode, `{"ok":true,"text":"<&>\n","path":"a","lines":1}` + "\n", "", 0},
		"done stream":     {Success("x", nil), StreamMode, `{"type":"end","outcome":{"ok":true,"text":"x"}}` + "\n", "", 0},
		"streamed":        {Outcome{Kind: Done, Text: "body\n[exit 0]\n", Epilogue: "[exit 0]\n", Streamed: true}, TextMode, "[exit 0]\n", "", 0},
		"status":          {Outcome{Kind: Done, Text: "t", Status: &seven}, TextMode, "t", "", 7},
		"tool error":      {Failure("%s: no such file", "x.txt"), TextMode, "", "toolkit read: x.txt: no such file\n", 1},
		"tool error json": {Failure("x.txt: no such file"), JSONMode, `{"ok":false,"error":"x.txt: no such file"}` + "\n", "", 1},
		"usage":           {Outcome{Kind: UsageError, Message: "bad", Usage: "toolkit read PATH"}, TextMode, "", "toolkit read: bad; usage: toolkit read PATH\n", 2},
		"usage two lines": {Outcome{Kind: UsageError, Message: "no id\nno name\n", Usage: "u"}, TextMode, "", "toolkit read: no id; no name; usage: u\n", 2},
		"usage json":      {Misuse("bad"), JSONMode, `{"ok":false,"error":"bad","usage":true}` + "\n", "", 2},
		"usage stream":    {Misuse("bad"), StreamMode, `{"type":"end","outcome":{"ok":false,"error":"bad","usage":true}}` + "\n", "", 2},
	} {
		t.Run(name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			status := tc.o.Print(&stdout, &stderr, "read", tc.mode)
			if stdout.String() != tc.stdout || stderr.String() != tc.stderr || status != tc.status {
				t.Fatalf("got stdout %q stderr %q status %d\nwant stdout %q stderr %q status %d",
					stdout.String(), stderr.String(), status, tc.stdout, tc.stderr, tc.status)
			}
		})
	}
}

func TestNoApplet(t *testing.T) {
	var stderr bytes.Buffer
	Misuse("no applet called %q", "x").Print(&bytes.Buffer{}, &stderr, "", TextMode)
	if stderr.String() != "toolkit: no applet called \"x\"\n" {
		t.Fatalf("got %q", stderr.String())
	}
}

// TestParse: an outcome read back from its --json object, as toolkit mcp
// reads a child's answer, prints the same object again, its details in
// their order; a usage error and a picture come back as what they were.
func TestParse(t *testing.T) {
	for _, o := range []Outcome{
		Success("hi\n[exit 0]\n", struct {
			Z    int    `json:"z"`
			A    string `json:"a"`
			Null *int   `json:"null"`
		}{3, "<&>", nil}),
		Success("x", nil),
		Failure("x.txt: no such file"),
		Misuse("bad \"input\""),
		{Kind: Done, Text: "[image]", Media: &Media{Type: "image/png", Data: []byte{0x89, 'P', 0}}},
	} {
		got, err := Parse(o.JSON())
		if err != nil {
			t.Fatalf("%s: %v", o.JSON(), err)
		}
		if string(got.JSON()) != string(o.JSON()) || got.Kind != o.Kind || got.ExitStatus() != o.ExitStatus() {
			t.Errorf("%s came back as %s (kind %v)", o.JSON(), got.JSON(), got.Kind)
		}
	}
	for _, bad := range []string{``, `[]`, `{"ok":1}`, `{"ok":true`} {
		if _, err := Parse([]byte(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}
