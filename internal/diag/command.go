package diag

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"toolkit/internal/outcome"
	"toolkit/internal/proc"
)

// run runs argv with content on its standard input and returns what it
// wrote on both outputs; its exit status is not an error (a checker that
// found an error says so by it), only a program that could not be run,
// or one that did not end before ctx did.
func run(ctx context.Context, content []byte, argv ...string) ([]byte, error) {
	return runIn(ctx, "", content, argv...)
}

// runIn is run in the directory dir.
func runIn(ctx context.Context, dir string, content []byte, argv ...string) ([]byte, error) {
	var out bytes.Buffer
	p, err := proc.StartChild(proc.Child{Path: argv[0], Args: argv, Dir: dir, Stdin: bytes.NewReader(content), Stdout: &out, Stderr: &out,
		Session: true, DeathSignal: syscall.SIGKILL})
	if err != nil {
		return nil, err
	}
	stop := context.AfterFunc(ctx, func() { _ = syscall.Kill(-p.Pid(), syscall.SIGKILL) })
	_ = p.Wait()
	if !stop() {
		return nil, context.Cause(ctx)
	}
	return out.Bytes(), nil
}

// goSyntax is gofmt's parse of the file (go/parser's, as gofmt is built
// on it): its first syntax errors, one a line, at most ten. In process,
// go/parser would add 348 KB to a binary that must stay under 12 MiB; a
// machine with Go files to check has Go, and gofmt with it.
func goSyntax(ctx context.Context, f file) ([]outcome.Diagnostic, error) {
	out, err := run(ctx, f.content, "gofmt")
	if err != nil {
		return nil, err
	}
	// "<standard input>:5:1: expected operand, found '}'"; the formatted
	// text instead, where there is none.
	var ds []outcome.Diagnostic
	for m := range lineMatches(out, gofmtError()) {
		line, _ := strconv.Atoi(m[1])
		col, _ := strconv.Atoi(m[2])
		ds = append(ds, outcome.Diagnostic{Path: f.rel, Line: line, Col: col, Severity: Error, Message: m[3], Source: "gofmt"})
	}
	return ds, nil
}

var gofmtError = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^<standard input>:(\d+):(\d+): (.*)$`) })

// shellSyntax is bash -n (sh -n for a script whose first line does not
// name bash): the first syntax error the shell finds.
func shellSyntax(ctx context.Context, f file) ([]outcome.Diagnostic, error) {
	shell := shellOf(f)
	out, err := run(ctx, f.content, shell, "-n", "/dev/stdin")
	if err != nil {
		return nil, err
	}
	// bash: "/dev/stdin: line 3: syntax error near unexpected token `fi'"
	// and then the line itself ("/dev/stdin: line 3: `fi fi'"); dash:
	// "/dev/stdin: 3: Syntax error: "fi" unexpected".
	var ds []outcome.Diagnostic
	for m := range lineMatches(out, shellError()) {
		if strings.HasPrefix(m[2], "`") {
			continue
		}
		n, _ := strconv.Atoi(m[1])
		ds = append(ds, outcome.Diagnostic{Path: f.rel, Line: n, Severity: Error, Message: m[2], Source: shell + " -n"})
	}
	return ds, nil
}

var shellError = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^/dev/stdin: (?:line )?(\d+): (.*)$`) })

// shellOf is the shell that checks f: bash for a .bash file or one whose
// first line names bash, else sh.
func shellOf(f file) string {
	first, _, _ := bytes.Cut(f.content, []byte{'\n'})
	if strings.HasSuffix(f.path, ".bash") || bytes.HasPrefix(first, []byte("#!")) && bytes.Contains(first, []byte("bash")) {
		return "bash"
	}
	return "sh"
}

// pythonCompile is Python's own compile() of the file, which finds its
// syntax errors and writes nothing (py_compile would write __pycache__).
func pythonCompile(ctx context.Context, f file) ([]outcome.Diagnostic, error) {
	const script = `import sys, json
try:
    compile(sys.stdin.buffer.read(), sys.argv[1], "exec", dont_inherit=True)
except SyntaxError as e:
    print(json.dumps([e.lineno or 0, e.offset or 0, getattr(e, "end_lineno", 0) or 0, getattr(e, "end_offset", 0) or 0, type(e).__name__ + ": " + str(e.msg)]))
except ValueError as e:
    print(json.dumps([0, 0, 0, 0, "ValueError: " + str(e)]))
`
	out, err := run(ctx, f.content, "python3", "-I", "-S", "-c", script, filepath.Base(f.path))
	if err != nil {
		return nil, err
	}
	out = bytes.TrimSpace(out)
	if len(out) == 0 {
		return nil, nil
	}
	var e []any
	if json.Unmarshal(out, &e) != nil || len(e) != 5 {
		return nil, fmt.Errorf("python3 said %q", firstLine(out))
	}
	num := func(v any) int { n, _ := v.(float64); return int(n) }
	msg, _ := e[4].(string)
	d := outcome.Diagnostic{Path: f.rel, Line: max(num(e[0]), 1), Col: num(e[1]), EndLine: num(e[2]), EndCol: num(e[3]), Severity: Error, Message: msg, Source: "python3"}
	if d.EndLine < d.Line {
		d.EndLine, d.EndCol = 0, 0
	}
	return []outcome.Diagnostic{d}, nil
}

// nodeCheck is node --check: the first syntax error of a script, as a
// module or not as node would load the file (.mjs, .cjs, or the "type"
// of the package.json nearest it).
func nodeCheck(ctx context.Context, f file) ([]outcome.Diagnostic, error) {
	out, err := run(ctx, f.content, "node", "--input-type="+moduleType(f), "--check", "-")
	if err != nil {
		return nil, err
	}
	// "[stdin]:3", the line, a caret line under the place, a blank line,
	// then "SyntaxError: Unexpected end of input".
	lines := strings.Split(string(out), "\n")
	var d *outcome.Diagnostic
	for i, l := range lines {
		if n, ok := strings.CutPrefix(l, "[stdin]:"); ok && d == nil {
			line, err := strconv.Atoi(n)
			if err != nil {
				continue
			}
			d = &outcome.Diagnostic{Path: f.rel, Line: line, Severity: Error, Source: "node --check"}
			if i+2 < len(lines) {
				if c := strings.IndexByte(lines[i+2], '^'); c >= 0 {
					d.Col = c + 1
				}
			}
			continue
		}
		if d != nil && nodeError().MatchString(l) {
			d.Message = l
			return []outcome.Diagnostic{*d}, nil
		}
	}
	return nil, nil
}

var nodeError = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Z][A-Za-z]*Error: `) })

// moduleType is how node loads f: "module" or "commonjs".
func moduleType(f file) string {
	switch filepath.Ext(f.path) {
	case ".mjs":
		return "module"
	case ".cjs":
		return "commonjs"
	}
	for dir := filepath.Dir(f.path); ; dir = filepath.Dir(dir) {
		if b, err := os.ReadFile(filepath.Join(dir, "package.json")); err == nil {
			var pkg struct {
				Type string `json:"type"`
			}
			if json.Unmarshal(b, &pkg) == nil && pkg.Type == "module" {
				return "module"
			}
			return "commonjs"
		}
		if dir == f.top || filepath.Dir(dir) == dir {
			return "commonjs"
		}
	}
}

// tscCheck is the TypeScript compiler over the file's project as it is on
// disk (tsc --noEmit -p ROOT, ROOT the nearest tsconfig.json's): its
// errors in this file. It reads the disk, not f.content: a check of it
// has no baseline, and only the errors on the lines the call made are new.
func tscCheck(ctx context.Context, f file) ([]outcome.Diagnostic, error) {
	ts := &Spec{Roots: [][]string{{"tsconfig.json", "jsconfig.json"}}}
	root := projectRoot(filepath.Dir(f.path), ts, f.top)
	args := []string{"tsc", "--noEmit", "--pretty", "false"}
	if exists(filepath.Join(root, "tsconfig.json")) || exists(filepath.Join(root, "jsconfig.json")) {
		args = append(args, "-p", root)
	} else {
		args = append(args, f.path)
	}
	out, err := once(ctx, strings.Join(args, "\x00"), func() ([]byte, error) { return runIn(ctx, root, nil, args...) })
	if err != nil {
		return nil, err
	}
	// "src/a.ts(2,10): error TS2304: Cannot find name 'x'.", the path
	// from root (or as given).
	var ds []outcome.Diagnostic
	for m := range lineMatches(out, tscError()) {
		path := m[1]
		if !filepath.IsAbs(path) {
			path = filepath.Join(root, path)
		}
		if path != f.path {
			continue
		}
		line, _ := strconv.Atoi(m[2])
		col, _ := strconv.Atoi(m[3])
		ds = append(ds, outcome.Diagnostic{Path: f.rel, Line: line, Col: col, Severity: m[4], Message: m[6], Code: m[5], Source: "tsc"})
	}
	return ds, nil
}

var tscError = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(.+)\((\d+),(\d+)\): (error|warning) (TS\d+): (.*)$`)
})

// runs are the programs a check ran over a whole project, by their
// arguments: one run answers for every file of the project a check
// asks about (tsc over a project takes seconds).
type runs struct {
	mu   sync.Mutex
	done map[string]*ran
}

type ran struct {
	once sync.Once
	out  []byte
	err  error
}

type runsKey struct{}

// withRuns is ctx with a place for a check's project runs.
func withRuns(ctx context.Context) context.Context {
	return context.WithValue(ctx, runsKey{}, &runs{done: map[string]*ran{}})
}

// once runs do once for the key in the check ctx belongs to.
func once(ctx context.Context, key string, do func() ([]byte, error)) ([]byte, error) {
	rs, ok := ctx.Value(runsKey{}).(*runs)
	if !ok {
		return do()
	}
	rs.mu.Lock()
	r := rs.done[key]
	if r == nil {
		r = &ran{}
		rs.done[key] = r
	}
	rs.mu.Unlock()
	r.once.Do(func() { r.out, r.err = do() })
	return r.out, r.err
}

// lineMatches are re's submatches of each line of a program's output that
// it matches, the line end left out: what the checkers' output parsers
// read.
func lineMatches(out []byte, re *regexp.Regexp) iter.Seq[[]string] {
	return func(yield func([]string) bool) {
		for l := range strings.Lines(string(out)) {
			if m := re.FindStringSubmatch(strings.TrimRight(l, "\n")); m != nil && !yield(m) {
				return
			}
		}
	}
}

func firstLine(b []byte) string {
	l, _, _ := bytes.Cut(b, []byte{'\n'})
	return string(l)
}
