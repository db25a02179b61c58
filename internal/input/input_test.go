package input

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

type testArgs struct {
	Command string            `json:"command" flag:"COMMAND" check:"required,nonempty,nonul"`
	Cwd     string            `json:"cwd" flag:"--cwd" check:"nonul"`
	Timeout *int              `json:"timeout_secs" flag:"--timeout" check:"min=1"`
	Env     map[string]string `json:"env" check:"envmap,nonul"`
	Stdin   *string           `json:"stdin"`
	Raw     bool              `json:"raw"`
	Mode    *string           `json:"mode" check:"oneof=on off"`
	Signal  *string           `json:"signal" check:"oneof=INT TERM,anycase"`
	Host    int               `json:"-"`
}

func TestDecodeGood(t *testing.T) {
	five := 5
	thirty := 30
	hi := "hi\x00there"
	lower := "int"
	for name, tc := range map[string]struct {
		in   string
		want testArgs
	}{
		"minimal":        {`{"command":"ls"}`, testArgs{Command: "ls"}},
		"spaces":         {" \n\t{ \"command\" : \"ls\" } \r\n", testArgs{Command: "ls"}},
		"all":            {`{"command":"make","cwd":"/src","timeout_secs":5,"env":{"A":"1"},"stdin":"hi\u0000there","raw":true}`, testArgs{Command: "make", Cwd: "/src", Timeout: &five, Env: map[string]string{"A": "1"}, Stdin: &hi, Raw: true}},
		"null optional":  {`{"command":"ls","cwd":null,"timeout_secs":null}`, testArgs{Command: "ls"}},
		"float integer":  {`{"command":"ls","timeout_secs":30.0}`, testArgs{Command: "ls", Timeout: &thirty}},
		"exp integer":    {`{"command":"ls","timeout_secs":3e1}`, testArgs{Command: "ls", Timeout: &thirty}},
		"escapes":        {`{"command":"a\"b\\c\/d\b\f\n\r\t\u00e9\ud83d\ude00"}`, testArgs{Command: "a\"b\\c/d\b\f\n\r\té😀"}},
		"lone surrogate": {`{"command":"x\ud800y"}`, testArgs{Command: "x\uFFFDy"}},
		"invalid utf8":   {"{\"command\":\"a\xffb\"}", testArgs{Command: "a\uFFFDb"}},
		"anycase":        {`{"command":"ls","signal":"int"}`, testArgs{Command: "ls", Signal: &lower}},
	} {
		t.Run(name, func(t *testing.T) {
			var got testArgs
			if err := Decode([]byte(tc.in), &got); err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestDecodeBad(t *testing.T) {
	for name, tc := range map[string]struct{ in, want string }{
		"empty":            {"", "input: empty; expected a JSON object"},
		"blank":            {" \n", "input: empty; expected a JSON object"},
		"not object":       {`["ls"]`, "input: expected a JSON object, not an array"},
		"string":           {`"ls"`, "input: expected a JSON object, not a string"},
		"invalid":          {`{"command":}`, "input: invalid JSON at offset 11: invalid character '}' at start of value"},
		"unterminated":     {`{"command":"ls`, "input: invalid JSON at offset 14: unexpected end of input"},
		"trailing":         {`{"command":"ls"} x`, "input: invalid JSON at offset 17: unexpected data after the JSON value"},
		"two objects":      {`{"command":"ls"}{}`, "input: invalid JSON at offset 16: unexpected data after the JSON value"},
		"trailing comma":   {`{"command":"ls",}`, `input: invalid JSON at offset 16: invalid character '}' at start of string (expecting '"')`},
		"unknown near":     {`{"comand":"ls"}`, `input: unknown field "comand" (did you mean "command"?)`},
		"unknown prefix":   {`{"command":"ls","timeout":5}`, `input: unknown field "timeout" (did you mean "timeout_secs"?)`},
		"unknown case":     {`{"Command":"ls"}`, `input: unknown field "Command" (did you mean "command"?)`},
		"unknown far":      {`{"command":"ls","colour":1}`, `input: unknown field "colour"; the fields are command, cwd, env, mode, raw, signal, stdin, timeout_secs`},
		"host field":       {`{"command":"ls","Host":1}`, `input: unknown field "Host"; the fields are command, cwd, env, mode, raw, signal, stdin, timeout_secs`},
		"twice":            {`{"command":"ls","command":"rm"}`, `input: field "command" given twice (at offset 16)`},
		"missing":          {`{"cwd":"/"}`, `input: missing required field "command"`},
		"null required":    {`{"command":null}`, `input: "command" must be a string, not null`},
		"wrong type":       {`{"command":["ls"]}`, `input: "command" must be a string, not an array`},
		"int as string":    {`{"command":"ls","timeout_secs":"30"}`, `input: "timeout_secs" must be an integer, not a string`},
		"fraction":         {`{"command":"ls","timeout_secs":1.5}`, `input: "timeout_secs" must be a whole number, not 1.5`},
		"huge":             {`{"command":"ls","timeout_secs":1e400}`, `input: "timeout_secs" is out of range: 1e400`},
		"huge int":         {`{"command":"ls","timeout_secs":99999999999999999999}`, `input: "timeout_secs" is out of range: 99999999999999999999`},
		"below min":        {`{"command":"ls","timeout_secs":0}`, `input: "timeout_secs" must be at least 1, not 0`},
		"negative":         {`{"command":"ls","timeout_secs":-3}`, `input: "timeout_secs" must be at least 1, not -3`},
		"empty command":    {`{"command":""}`, `input: "command" must not be empty`},
		"nul command":      {`{"command":"a\u0000b"}`, `input: "command" must not contain a NUL byte`},
		"env not strings":  {`{"command":"ls","env":{"A":1}}`, `input: "env" must map names to strings, but "A" is a number`},
		"env bad name":     {`{"command":"ls","env":{"A=B":"1"}}`, `input: "env" has a name that cannot be an environment variable: "A=B"`},
		"env empty name":   {`{"command":"ls","env":{"":"1"}}`, `input: "env" has a name that cannot be an environment variable: ""`},
		"env twice":        {`{"command":"ls","env":{"A":"1","A":"2"}}`, `input: "env" names "A" twice (at offset 31)`},
		"bool as string":   {`{"command":"ls","raw":"yes"}`, `input: "raw" must be a boolean, not a string`},
		"not one of":       {`{"command":"ls","mode":"ON"}`, `input: "mode" must be on or off, not "ON"`},
		"not one of, case": {`{"command":"ls","signal":"BOGUS"}`, `input: "signal" must be INT or TERM, not "BOGUS"`},
		"control in str":   {"{\"command\":\"a\nb\"}", "input: invalid JSON at offset 13: control character 0x0a in a string (it must be escaped)"},
		"bad escape":       {`{"command":"a\qb"}`, "input: invalid JSON at offset 13: invalid escape sequence `\\q` in string"},
		"bad unicode":      {`{"command":"\u12g4"}`, "input: invalid JSON at offset 12: invalid escape sequence `\\u12g4` in string"},
		"leading zero":     {`{"command":"ls","timeout_secs":01}`, "input: invalid JSON at offset 32: invalid character '1' after object value (expecting ',' or '}')"},
		"deep":             {`{"command":"ls","env":` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}`, `input: "env" must be an object of strings, not an array`},
		"bare word":        {`{"command":ls}`, "input: invalid JSON at offset 11: invalid character 'l' at start of value"},
		"bad literal":      {`{"command":nul}`, "input: invalid JSON at offset 14: invalid character '}' in literal null (expecting 'l')"},
		"unquoted key":     {`{command:"ls"}`, `input: invalid JSON at offset 1: invalid character 'c' at start of string (expecting '"')`},
		"missing colon":    {`{"command" "ls"}`, `input: invalid JSON at offset 11: invalid character '"' after object name (expecting ':')`},
		"binary":           {"\x00\x01", `input: invalid JSON at offset 0: invalid character '\x00' at start of value`},
		"number then junk": {`{"command":"ls","timeout_secs":5x}`, "input: invalid JSON at offset 32: invalid character 'x' after object value (expecting ',' or '}')"},
	} {
		t.Run(name, func(t *testing.T) {
			var got testArgs
			err := Decode([]byte(tc.in), &got)
			if err == nil {
				t.Fatalf("Decode(%q) = nil error, want %q", tc.in, tc.want)
			}
			if err.Error() != tc.want {
				t.Fatalf("Decode(%q):\n got %q\nwant %q", tc.in, err, tc.want)
			}
		})
	}
}

func TestFieldErrorIsTyped(t *testing.T) {
	var a testArgs
	err := Decode([]byte(`{"command":"ls","timeout_secs":0}`), &a)
	var fe *FieldError
	if !errors.As(err, &fe) {
		t.Fatalf("error %v is not a *FieldError", err)
	}
	if got, want := fe.PersonError(), "--timeout must be at least 1, not 0"; got != want {
		t.Fatalf("PersonError = %q, want %q", got, want)
	}
}

// TestReadBound: an input of the limit is read whole, one byte more is
// refused, from a pipe and from a file. At MaxSize itself under --ci (the
// buffers of 64 MiB take seconds here, many more under -race); at 1 MiB
// otherwise, through the same code.
func TestReadBound(t *testing.T) {
	limit := int64(MaxSize)
	if testing.Short() {
		limit = 1 << 20
	}
	if errTooLarge.Error() != "input: larger than 64 MiB" {
		t.Errorf("the error says %q", errTooLarge)
	}
	file := func(n int64) io.Reader {
		f, err := os.Create(filepath.Join(t.TempDir(), "in"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		if err := f.Truncate(n); err != nil {
			t.Fatal(err)
		}
		return f
	}
	pipe := func(n int64) io.Reader { return io.LimitReader(zeros{}, n) }
	for name, from := range map[string]func(int64) io.Reader{"pipe": pipe, "file": file} {
		if _, err := readAtMost(from(limit+1), limit); err != errTooLarge {
			t.Errorf("%s: the limit and one byte: err = %v", name, err)
		}
		data, err := readAtMost(from(limit), limit)
		if err != nil || int64(len(data)) != limit {
			t.Errorf("%s: the limit: %d bytes, err = %v", name, len(data), err)
		}
	}
}

// zeros reads as endless zero bytes.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

func TestSuggest(t *testing.T) {
	names := []string{"command", "cwd", "timeout_secs", "env", "stdin"}
	for in, want := range map[string]string{
		"comand": "command", "commnd": "command", "Command": "command", "timeoutSecs": "timeout_secs",
		"timeout": "timeout_secs", "stdn": "stdin", "cmd": "command", "dir": "", "description": "", "x": "", "envs": "env",
	} {
		if got := Suggest(in, names); got != want {
			t.Errorf("Suggest(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzDecode: on any bytes Decode never panics, every error it gives
// begins with "input: ", and what it accepts is valid JSON that decodes again
// to the same Args once encoded.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		`{"command":"ls"}`, `{"command":"make","cwd":"/src","timeout_secs":5,"env":{"A":"1"},"stdin":"x","raw":true}`,
		`{"command":"a\u00e9\ud83d\ude00","timeout_secs":3e1}`, "{\"command\":\"\xff\"}", `{"command":"\ud800"}`, `{"a" : 1 , }`,
		`[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]`, `{"command":"\"\\\/\b\f\n\r\t"}`,
		`{"command":"x","env":{"A":"1","A":"2"}}`, `{"command":null}`, `{"command":"x"} {}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var a testArgs
		err := Decode(data, &a)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "input: ") {
				t.Fatalf("Decode(%q): error %q", data, err)
			}
			return
		}
		if !json.Valid(data) {
			t.Fatalf("Decode(%q) accepted invalid JSON", data)
		}
		again, err := json.Marshal(a)
		if err != nil {
			t.Fatal(err)
		}
		var b testArgs
		if err := Decode(again, &b); err != nil || !reflect.DeepEqual(a, b) {
			t.Fatalf("Decode(%q) = %+v; encoded %s, decoded again %+v, %v", data, a, again, b, err)
		}
	})
}

func BenchmarkDecodeLargeString(b *testing.B) {
	type writeArgs struct {
		Path    string `json:"path"`
		Content string `json:"content"`
	}
	content := strings.Repeat("hello world, this is a line of text with \"quotes\" and tabs\t.\n", 1<<20)
	data, _ := json.Marshal(writeArgs{Path: "x", Content: content})
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		var a writeArgs
		if err := Decode(data, &a); err != nil || a.Content != content {
			b.Fatal(err)
		}
	}
}

// TestReadSizes reads inputs of unknown size (from a pipe) in reads of an
// odd size, and gets every byte back.
func TestReadSizes(t *testing.T) {
	for _, n := range []int{0, 1, 4098, 4099, 4100, 1 << 20, 8<<20 + 5} {
		in := bytes.Repeat([]byte("0123456789abcdef\n"), n/17+1)[:n]
		got, err := Read(struct{ io.Reader }{&oddReader{in}})
		if err != nil || !bytes.Equal(got, in) {
			t.Fatalf("%d bytes: read %d bytes, error %v", n, len(got), err)
		}
	}
}

// oddReader returns at most 4099 bytes a read.
type oddReader struct{ b []byte }

func (r *oddReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), 4099)], r.b)
	r.b = r.b[n:]
	return n, nil
}
