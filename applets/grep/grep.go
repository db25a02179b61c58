// Package grep searches the files under a directory for a pattern, as git
// sees the tree: what .gitignore and .ignore ignore, .git and hidden names
// are left out unless asked for.
//
//	toolkit grep [flags] PATTERN [PATH]
//	echo '{"pattern":"func main","path":"src","glob":"*.go"}' | toolkit grep
//
// The pattern is Go's RE2 syntax (linear time: no pattern can take
// exponential time); one with no metacharacter, or with fixed, is a literal
// and is found without the regular expression engine. Lines are shown as
// path:LINE:text with read's numbering (context lines as path-LINE-text,
// groups apart by --), a long line cut around its match, the matches sorted
// by path then line; then a line that counts them and says how to go on:
//
//	[312 matches in 41 files; shown 1-200; next: offset 201]
//
// output "files" lists the files that match, "count" each one's count.
// Binary files (read's rule), files over 10 MiB, FIFOs and devices are
// skipped and counted; the links a walk meets are not followed (a file
// named as the path is, inside the root). The files are
// searched by one goroutine per core.
package grep

import (
	"context"
	"errors"
	"path"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bmatcuk/doublestar/v4"

	"toolkit/internal/cmdline"
	"toolkit/internal/outcome"
	"toolkit/internal/root"
	"toolkit/internal/text"
	"toolkit/internal/walk"
)

// Args is the input of one grep call.
type Args struct {
	Pattern    string  `json:"pattern" flag:"PATTERN" check:"required,nonempty,nonul" desc:"What to find: a regular expression in Go's RE2 syntax (\\b, \\w, [a-z], (a|b), (?i) …; no backreferences or lookaround), or a literal with fixed. Each line is matched on its own, unless multiline."`
	Path       *string `json:"path,omitempty" flag:"PATH" check:"nonempty,nonul" desc:"The directory (or file) to search. Default: the working directory (the root with --root); ~ is the home directory."`
	Glob       *string `json:"glob,omitempty" flag:"--glob PATTERN" usage:"search only files whose name matches PATTERN (with a /: whose path does); several apart by spaces, !PATTERN leaves out" check:"nonempty,nonul" desc:"Search only the files whose name matches this glob (*.go, *.{ts,tsx}); one with a / matches the path from path (src/**/*.go). Several globs apart by spaces: a file matches one of them; one that begins with ! leaves out what it matches (!*.min.js, !vendor/**)."`
	Type       *string `json:"type,omitempty" flag:"--type NAME" usage:"search only files of this type, as ripgrep's --type (go, py, js, ts, rust, …)" check:"oneof=c cpp cs css dart docker elixir go h haskell html java js json kotlin lua make markdown md php protobuf py ruby rust scala sh sql swift toml ts txt xml yaml zig" desc:"Search only the files of this type, by their names as ripgrep's --type has them: go, py, js (also .jsx, .vue, .mjs), ts (also .tsx), rust, java, c, cpp, …"`
	IgnoreCase bool    `json:"ignore_case,omitempty" flag:"--ignore-case" desc:"Match upper and lower case alike."`
	Fixed      bool    `json:"fixed,omitempty" flag:"--fixed" desc:"Take pattern as a literal string, not a regular expression."`
	Multiline  bool    `json:"multiline,omitempty" flag:"--multiline" desc:"Let a match span lines: the dot (.) matches a line end too, and \\n may be in the pattern (ripgrep's -U --multiline-dotall). Each line of a match is shown."`
	Context    *int    `json:"context,omitempty" flag:"--context N" check:"min=0" desc:"Show this many lines before and after each match (at most 10)."`
	Before     *int    `json:"before,omitempty" flag:"--before N" check:"min=0" desc:"Show this many lines before each match (at most 10), in place of context's."`
	After      *int    `json:"after,omitempty" flag:"--after N" check:"min=0" desc:"Show this many lines after each match (at most 10), in place of context's."`
	MaxCount   *int    `json:"max_count,omitempty" flag:"--max-count N" check:"min=1" desc:"Take at most this many matching lines from each file."`
	Output     *string `json:"output,omitempty" flag:"--output MODE" usage:"lines (default), files or count" check:"oneof=lines files count" desc:"lines (default): the matching lines; files: the files that match; count: how many lines match in each file."`
	Sort       *string `json:"sort,omitempty" flag:"--sort ORDER" usage:"mtime or path: the order of output files (default mtime, newest first) and count (default path)" check:"oneof=path mtime" desc:"mtime: the most recently changed first; path: in order of their paths. The default is mtime for output files, path for count; matching lines are always in path order."`
	Offset     *int    `json:"offset,omitempty" flag:"--offset N" check:"min=1" desc:"The first match (or file) to show, from 1, to go on after a page."`
	Limit      *int    `json:"limit,omitempty" flag:"--limit N" check:"min=1" desc:"How many matches (or files) to show; default 200."`
	Hidden     bool    `json:"hidden,omitempty" flag:"--hidden" desc:"Search hidden files and directories too (names starting with a dot)."`
	NoIgnore   bool    `json:"no_ignore,omitempty" flag:"--no-ignore" desc:"Search what .gitignore, .ignore and .git/info/exclude ignore too, and .git."`

	// Host holds the settings a host chooses, not the model.
	Host Options `json:"-"`
}

// Options are the host's settings.
type Options struct {
	Root *root.Root // confines path
}

// The defaults and bounds.
const (
	DefaultLimit = 200
	MaxContext   = 10
	// MaxFile is the largest file searched: a larger one is skipped, and
	// counted.
	MaxFile = 10 << 20
	// MaxLine is how much of a long line is shown, in bytes, around its
	// match.
	MaxLine = 400
)

// Details are the facts of a grep call for --json.
type Details struct {
	Matches    int64       `json:"matches"`
	Files      int64       `json:"files"` // files with a match
	Searched   int64       `json:"searched"`
	Shown      int         `json:"shown"`
	NextOffset *int64      `json:"next_offset"`
	Skipped    SkipDetails `json:"skipped"`
}

// SkipDetails count what was not searched.
type SkipDetails struct {
	Binary     int64 `json:"binary"` // binary files that match, not shown
	TooLarge   int64 `json:"too_large"`
	Ignored    int64 `json:"ignored"`
	Hidden     int64 `json:"hidden"`
	Unreadable int64 `json:"unreadable"`
}

// Applet is grep's command line and in-process call.
var Applet = cmdline.Applet[Args]{
	Name:           "grep",
	Usage:          "search the files under a directory for a pattern, as git sees the tree",
	Synopsis:       "toolkit grep [flags] PATTERN [PATH]",
	Example:        `{"pattern":"func main","glob":"*.go"}`,
	Description:    Description,
	Details:        Details{},
	Hints:          cmdline.Hints{ReadOnly: true, Idempotent: true},
	FlagsAfterArgs: true,
	Run: func(ctx context.Context, a *Args, h cmdline.Host) outcome.Outcome {
		a.Host.Root = h.Root
		return Run(ctx, *a)
	},
}

// hit is a matching line and its context.
type hit struct {
	path   string
	line   int64
	text   string
	more   []ctxLine // the other lines of a match that spans lines
	before []ctxLine
	after  []ctxLine
}

type ctxLine struct {
	line int64
	text string
}

// kept holds the first n hits in order of path and line, whatever order
// the files come in: each file's hits, in line order, as one batch. When
// they come to twice n, the batches are sorted by path and those past the
// first n hits let go, so that memory stays within twice n hits and the
// sorting is of files, not of hits.
type kept struct {
	n     int
	files []fileHits
	total int // hits in files
	// last is the path of the last file of the first n hits, once there
	// are n: no hit of a file whose path sorts after it can be shown, so
	// its hits are counted, not laid out. Read without the lock.
	last atomic.Pointer[string]
}

// past says no hit of the file at path can be among the first n.
func (k *kept) past(path string) bool {
	last := k.last.Load()
	return last != nil && path > *last
}

// fileHits are one file's hits, in line order.
type fileHits struct {
	path string
	hits []*hit
}

func (k *kept) add(path string, hits []*hit) {
	k.files = append(k.files, fileHits{path, hits})
	k.total += len(hits)
	if k.total >= 2*k.n {
		k.trim()
	}
}

// trim sorts the batches by path and keeps the first n hits.
func (k *kept) trim() {
	slices.SortFunc(k.files, func(a, b fileHits) int { return strings.Compare(a.path, b.path) })
	left := k.n
	for i, f := range k.files {
		if len(f.hits) >= left {
			k.files[i].hits = f.hits[:left]
			clear(k.files[i+1:])
			k.files = k.files[:i+1]
			last := f.path // a copy: the slot moves at the next sort
			k.last.Store(&last)
			break
		}
		left -= len(f.hits)
	}
	k.total = min(k.total, k.n)
}

// sorted is the first n hits in order.
func (k *kept) sorted() []*hit {
	k.trim()
	out := make([]*hit, 0, k.total)
	for _, f := range k.files {
		out = append(out, f.hits...)
	}
	return out
}

// fileCount is a file's count of matching lines.
type fileCount struct {
	path  string
	count int64
	mtime time.Time // with sort mtime
}

// search is one grep call under way.
type search struct {
	a       Args
	find    *finder
	globs   []string // a file must match one of them, if there are any
	notLike []string // and none of these (the globs given with !)
	kind    string   // the file type asked for, if any
	newest  bool     // files and counts newest first
	before  int      // context lines before each match
	after   int      // and after it
	most    int64    // matching lines taken from a file; 0 for all
	mode    string
	display func(rel string) string

	mu      sync.Mutex
	kept    kept
	counts  []fileCount
	matches int64

	searched, binary, tooLarge, unreadable atomic.Int64
}

// Run carries out one grep call.
func Run(ctx context.Context, a Args) outcome.Outcome {
	mode := "lines"
	if a.Output != nil {
		mode = *a.Output
	}
	find, err := newFinder(a.Pattern, a.Fixed, a.IgnoreCase, a.Multiline)
	switch {
	case errors.Is(err, errLineEnd):
		return outcome.Misuse("input: pattern: %s", err)
	case err != nil:
		return outcome.Misuse("input: pattern is not a regular expression: %s", strings.TrimPrefix(err.Error(), "error parsing regexp: "))
	}
	s := &search{a: a, find: find, mode: mode}
	if a.Type != nil {
		s.kind = *a.Type
	}
	// Files newest first unless asked otherwise, as Claude Code lists them
	// and as glob does; counts and lines in order of their paths.
	s.newest = a.Sort != nil && *a.Sort == "mtime" || a.Sort == nil && mode == "files"
	if a.Glob != nil {
		for g := range strings.FieldsSeq(*a.Glob) {
			pattern, not := strings.CutPrefix(g, "!")
			if pattern == "" {
				return outcome.Misuse("input: glob is not a pattern: %q", g)
			}
			if err := walk.CheckGlob(pattern); err != nil {
				return outcome.Misuse("input: glob %s: %q", err, g)
			}
			if not {
				s.notLike = append(s.notLike, pattern)
			} else {
				s.globs = append(s.globs, pattern)
			}
		}
		if len(s.globs)+len(s.notLike) == 0 {
			return outcome.Misuse("input: glob is not a pattern: %q", *a.Glob)
		}
	}
	if a.Context != nil {
		s.before, s.after = min(*a.Context, MaxContext), min(*a.Context, MaxContext)
	}
	if a.Before != nil {
		s.before = min(*a.Before, MaxContext)
	}
	if a.After != nil {
		s.after = min(*a.After, MaxContext)
	}
	if a.MaxCount != nil {
		s.most = int64(*a.MaxCount)
	}
	offset, limit := 1, DefaultLimit
	if a.Offset != nil {
		offset = *a.Offset
	}
	if a.Limit != nil {
		limit = *a.Limit
	}
	s.kept.n = min(offset-1+limit, 1<<20) // saturating: the first offset+limit-1 hits

	name := "."
	if a.Path != nil {
		name = *a.Path
	}
	r := a.Host.Root
	fi, err := r.Stat(name)
	if err != nil {
		return outcome.Failure("%s: %s", name, root.Reason(err))
	}
	var stats *walk.Stats
	if fi.IsDir() {
		s.display = func(rel string) string { return text.Escape(walk.Join(name, rel)) }
		o := walk.Options{Hidden: a.Hidden, NoIgnore: a.NoIgnore}
		stats, err = walk.Dir(ctx, r, name, o, func(e walk.Entry) bool {
			if e.Type.IsDir() {
				return true
			}
			if e.Type.IsRegular() && s.wanted(e.Path, e.Name) {
				s.file(e)
			}
			return true
		})
		if err != nil {
			return outcome.Failure("%s: %s", name, root.Reason(err))
		}
	} else {
		// A file named is followed if it is a link (inside the root, as
		// read follows it); links met in a walk are not.
		real, err := r.Resolve(name)
		if err != nil {
			return outcome.Failure("%s: %s", name, root.Reason(err))
		}
		dir, base := path.Split(real)
		if dir == "" {
			dir = "."
		}
		d, err := r.OpenRoot(dir)
		if err != nil {
			return outcome.Failure("%s: %s", name, root.Reason(err))
		}
		defer d.Close()
		e, done, err := walk.One(d, base)
		if err != nil {
			return outcome.Failure("%s: %s", name, root.Reason(err))
		}
		defer done()
		s.display = func(string) string { return text.Escape(name) }
		s.file(e)
	}
	if ctx.Err() != nil {
		return outcome.Failure("the search was stopped: %s", context.Cause(ctx))
	}
	return s.result(offset, limit, stats)
}

// wanted says whether a file passes the type and glob filters.
func (s *search) wanted(rel, name string) bool {
	if s.kind != "" && !walk.OfType(s.kind, name) {
		return false
	}
	// A glob with a / matches the path from the start, one without the
	// name.
	match := func(g string) bool {
		if strings.Contains(g, "/") {
			return doublestar.MatchUnvalidated(g, rel)
		}
		return doublestar.MatchUnvalidated(g, name)
	}
	if len(s.globs) > 0 && !slices.ContainsFunc(s.globs, match) {
		return false
	}
	return !slices.ContainsFunc(s.notLike, match)
}

// Description tells a model when to use grep and what it returns.
const Description = `Search the files under a directory for a regular expression (Go's RE2 syntax) or a literal, the way git sees the tree: files that .gitignore or .ignore ignore, .git, hidden files, binary files and files over 10 MiB are not searched (say hidden or no_ignore to search them). Use it instead of grep or rg in the shell: it works in any image, and its line numbers are those the read tool shows.

Returns path:LINE:text for each matching line (context lines as path-LINE-text), sorted by path and line, long lines cut around the match, then a line such as [312 matches in 41 files; shown 1-200; next: offset 201]: call again with that offset for more. output "files" lists only the files that match, the most recently changed first; "count" gives each file's count. glob narrows the files (*.go, **/*_test.go).`
