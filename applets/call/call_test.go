package call

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/urfave/cli/v2"

	"toolkit/applets"
	"toolkit/internal/cmdline"
	"toolkit/internal/root"
	"toolkit/testsupport/mediatest"
)

// host is a Host confined to dir, with every host setting at toolkit
// call's defaults, as its command line gives them.
func host(t *testing.T, dir string) cmdline.Host {
	t.Helper()
	r, err := root.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	var settings cmdline.Settings
	app := &cli.App{Flags: applets.ModelFlags(), Action: func(c *cli.Context) error { settings = c; return nil }}
	// No history: a test's calls are not a model's.
	if err := app.Run([]string{"call", "--history=off"}); err != nil {
		t.Fatal(err)
	}
	return cmdline.Host{Root: r, Settings: settings, Details: true}
}

// TestResultShapes: each block in testdata/blocks, written from the APIs'
// documentation, gives a result of the shape that API takes back
// (testdata/results.schema.json, also from the documentation), with the
// block's id echoed.
func TestResultShapes(t *testing.T) {
	raw, err := os.ReadFile("testdata/results.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	var all struct {
		Defs map[string]*jsonschema.Schema `json:"$defs"`
	}
	if err := json.Unmarshal(raw, &all); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob("testdata/blocks/*.json")
	if len(files) < 10 {
		t.Fatalf("only %d blocks", len(files))
	}
	tree := map[string][]byte{
		"f.txt":     []byte("one\ntwo\n"),
		"shot.png":  mediatest.Encode(mediatest.Picture(200, 100, true), "png"),
		"photo.jpg": mediatest.Encode(mediatest.Picture(1400, 1050, false), "jpeg"), // over the limits: scaled
		"doc.pdf":   mediatest.PDF("one"),
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			dir := t.TempDir()
			for name, data := range tree {
				if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			data, _ := os.ReadFile(f)
			var in map[string]any
			if err := json.Unmarshal(data, &in); err != nil {
				t.Fatal(err)
			}
			out, failed, err := Run(context.Background(), data, host(t, dir))
			if err != nil {
				t.Fatal(err)
			}
			var res map[string]any
			if err := json.Unmarshal(out, &res); err != nil {
				t.Fatal(err)
			}
			kind, _ := res["type"].(string)
			schema := all.Defs[kind]
			if schema == nil {
				t.Fatalf("result of type %q: %s", kind, out)
			}
			// Resolved with the other definitions, which its blocks refer to.
			whole := &jsonschema.Schema{Ref: "#/$defs/" + kind, Defs: all.Defs}
			rs, err := whole.Resolve(nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := rs.Validate(res); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			if strings.Contains(f, "image") || strings.Contains(f, "pdf") {
				// A text block, then the picture's or the document's.
				body := res["content"]
				if kind == "function_call_output" {
					body = res["output"]
				}
				if items, ok := body.([]any); !ok || len(items) != 2 {
					t.Errorf("no blocks for the picture or document: %.300s", out)
				}
			}
			id := res["call_id"]
			if kind == "tool_result" {
				id = res["tool_use_id"]
			}
			if kind == "local_shell_call_output" {
				id = res["id"]
			}
			want := in["call_id"]
			if in["type"] == "tool_use" {
				want = in["id"]
			}
			if id != want {
				t.Errorf("id %v, want %v", id, want)
			}
			if bad := strings.Contains(f, "error") || strings.Contains(f, "failed"); failed != bad {
				t.Errorf("failed %v: %s", failed, out)
			}
		})
	}
}

// TestInsert: insert after each line of files with and without a final
// line end, CRLF and a BOM, as the text editor's reference does it, and
// past the end refused.
func TestInsert(t *testing.T) {
	for _, tc := range []struct {
		file string
		line int
		want string
	}{
		{"a\nb\n", 0, "X\na\nb\n"},
		{"a\nb\n", 1, "a\nX\nb\n"},
		{"a\nb\n", 2, "a\nb\nX\n"},
		{"a\nb", 2, "a\nb\nX"},
		{"a\nb", 1, "a\nX\nb"},
		{"", 0, "X\n"},
		{"a\r\nb\r\n", 1, "a\r\nX\r\nb\r\n"},
		{"\xef\xbb\xbfa\n", 0, "\xef\xbb\xbfX\na\n"},
	} {
		dir := t.TempDir()
		p := filepath.Join(dir, "f")
		if err := os.WriteFile(p, []byte(tc.file), 0o644); err != nil {
			t.Fatal(err)
		}
		o := insert(context.Background(), "f", tc.line, "X", host(t, dir))
		got, _ := os.ReadFile(p)
		if string(got) != tc.want {
			t.Errorf("%q after line %d: %q, want %q (%s%s)", tc.file, tc.line, got, tc.want, o.Text, o.Message)
		}
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "f"), []byte("a\n"), 0o644)
	if o := insert(context.Background(), "f", 2, "X", host(t, dir)); !strings.Contains(o.Message, "insert_line 2 is not a line of the file, which has 1") {
		t.Errorf("past the end: %+v", o)
	}
}
