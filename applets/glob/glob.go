// Package glob lists the files under a directory whose paths match a
// pattern, as git sees the tree: what .gitignore and .ignore ignore, .git
// and hidden names are left out unless asked for.
//
//	toolkit glob [flags] PATTERN [PATH]
//	echo '{"pattern":"**/*_test.go","path":"src"}' | toolkit glob
//
// The pattern is github.com/bmatcuk/doublestar/v4's: * and ? within a
// name, ** for any directories, [abc], {a,b}; it matches the whole path
// from PATH (so *.go is the .go files in PATH itself, **/*.go all of them).
// One path per line, newest first (sort "path" for names in order), then a
// line that counts them and says how to go on.
package glob

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/bmatcuk/doublestar/v4"

	"toolkit/internal/cmdline"
	"toolkit/internal/outcome"
	"toolkit/internal/page"
	"toolkit/internal/root"
	"toolkit/internal/text"
	"toolkit/internal/walk"
)

// Args is the input of one glob call.
type Args struct {
	Pattern  string  `json:"pattern" flag:"PATTERN" check:"required,nonempty,nonul" desc:"A glob matched against each path from path: * and ? within a name, ** for any number of directories, [abc], {a,b}. **/*.go is every .go file; src/**/*_test.go those under src; *.md those in path itself."`
	Path     *string `json:"path,omitempty" flag:"PATH" check:"nonempty,nonul" desc:"The directory to look in. Default: the working directory (the root with --root); ~ is the home directory."`
	Type     *string `json:"type,omitempty" flag:"--type TYPE" usage:"file (default), dir or any" check:"oneof=file dir any" desc:"What to list: file (default; symbolic links count as files), dir, or any."`
	Sort     *string `json:"sort,omitempty" flag:"--sort ORDER" usage:"mtime (newest first, the default) or path" check:"oneof=mtime path" desc:"mtime (default): the most recently changed first; path: in order of their paths."`
	Offset   *int    `json:"offset,omitempty" flag:"--offset N" check:"min=1" desc:"The first path to show, from 1, to go on after a page."`
	Limit    *int    `json:"limit,omitempty" flag:"--limit N" check:"min=1" desc:"How many paths to show; default 500."`
	Hidden   bool    `json:"hidden,omitempty" flag:"--hidden" desc:"List hidden files and directories too (names starting with a dot)."`
	NoIgnore bool    `json:"no_ignore,omitempty" flag:"--no-ignore" desc:"List what .gitignore, .ignore and .git/info/exclude ignore too, and .git."`

	// Host holds the settings a host chooses, not the model.
	Host Options `json:"-"`
}

// Options are the host's settings.
type Options struct {
	Root *root.Root // confines path
}

// DefaultLimit is how many paths a call shows unless it asks.
const DefaultLimit = 500

// Details are the facts of a glob call for --json.
type Details struct {
	Found      int         `json:"found"`
	Shown      int         `json:"shown"`
	NextOffset *int        `json:"next_offset"`
	Skipped    SkipDetails `json:"skipped"`
}

// SkipDetails count what was left out.
type SkipDetails struct {
	Ignored    int64 `json:"ignored"`
	Hidden     int64 `json:"hidden"`
	Unreadable int64 `json:"unreadable"`
}

// Applet is glob's command line and in-process call.
var Applet = cmdline.Applet[Args]{
	Name:           "glob",
	Usage:          "list the files whose paths match a pattern, as git sees the tree",
	Synopsis:       "toolkit glob [flags] PATTERN [PATH]",
	Example:        `{"pattern":"**/*_test.go"}`,
	Description:    Description,
	Details:        Details{},
	Hints:          cmdline.Hints{ReadOnly: true, Idempotent: true},
	FlagsAfterArgs: true,
	Run: func(ctx context.Context, a *Args, h cmdline.Host) outcome.Outcome {
		a.Host.Root = h.Root
		return Run(ctx, *a)
	},
}

// found is a path that matched.
type found struct {
	path  string
	mtime time.Time
}

// Run carries out one glob call.
func Run(ctx context.Context, a Args) outcome.Outcome {
	kind := "file"
	if a.Type != nil {
		kind = *a.Type
	}
	order := "mtime"
	if a.Sort != nil {
		order = *a.Sort
	}
	pattern := strings.TrimPrefix(a.Pattern, "./")
	if err := walk.CheckGlob(pattern); err != nil {
		return outcome.Misuse("input: pattern %s: %q", err, a.Pattern)
	}
	if path.IsAbs(pattern) || pattern == ".." || strings.HasPrefix(pattern, "../") {
		return outcome.Misuse("input: pattern is matched against paths from path: give the directory as path, not in the pattern (%q)", a.Pattern)
	}
	offset, limit := 1, DefaultLimit
	if a.Offset != nil {
		offset = *a.Offset
	}
	if a.Limit != nil {
		limit = *a.Limit
	}

	name := "."
	if a.Path != nil {
		name = *a.Path
	}
	r := a.Host.Root
	// The walk starts where the pattern's fixed part ends: src/**/*.go
	// walks src only.
	base, _ := doublestar.SplitPattern(pattern)
	startName := name
	if base != "." {
		startName = path.Join(name, base)
	}
	fi, err := r.Stat(startName)
	switch {
	case err != nil && base != "." && errors.Is(err, fs.ErrNotExist):
		return listed(nil, offset, limit, order, &walk.Stats{})
	case err != nil:
		return outcome.Failure("%s: %s", name, root.Reason(err))
	case !fi.IsDir():
		return outcome.Failure("%s: not a directory", startName)
	}
	prefix := ""
	if base != "." {
		prefix = base + "/"
	}
	o := walk.Options{Hidden: a.Hidden, NoIgnore: a.NoIgnore}
	var mu sync.Mutex
	var out []found
	stats, err := walk.Dir(ctx, r, startName, o, func(e walk.Entry) bool {
		isDir := e.Type.IsDir()
		switch {
		case kind == "file" && (isDir || !e.Type.IsRegular() && e.Type&fs.ModeSymlink == 0):
			return true
		case kind == "dir" && !isDir:
			return true
		}
		rel := prefix + e.Path
		if !doublestar.MatchUnvalidated(pattern, rel) {
			return true
		}
		f := found{path: walk.Join(name, rel)}
		if order == "mtime" {
			if t, err := e.ModTime(); err == nil {
				f.mtime = t
			}
		}
		mu.Lock()
		out = append(out, f)
		mu.Unlock()
		return true
	})
	if err != nil {
		return outcome.Failure("%s: %s", startName, root.Reason(err))
	}
	if ctx.Err() != nil {
		return outcome.Failure("the listing was stopped: %s", context.Cause(ctx))
	}
	return listed(out, offset, limit, order, stats)
}

// listed lays out the paths found.
func listed(out []found, offset, limit int, order string, stats *walk.Stats) outcome.Outcome {
	slices.SortFunc(out, func(a, b found) int {
		if order == "mtime" {
			if c := b.mtime.Compare(a.mtime); c != 0 {
				return c
			}
		}
		return strings.Compare(a.path, b.path)
	})
	d := Details{Found: len(out), Skipped: SkipDetails{Ignored: stats.Ignored.Load(), Hidden: stats.Hidden.Load(), Unreadable: stats.Errors.Load()}}
	shown := page.Of(out, offset, limit)
	d.Shown = len(shown)
	var b strings.Builder
	for _, f := range shown {
		b.WriteString(text.Escape(f.path))
		b.WriteByte('\n')
	}
	b.WriteString("[")
	switch {
	case len(out) == 0:
		b.WriteString("nothing matches")
	case len(out) == 1:
		b.WriteString("1 match")
	default:
		fmt.Fprintf(&b, "%d matches", len(out))
	}
	if len(out) > 1 {
		if order == "mtime" {
			b.WriteString(", newest first")
		} else {
			b.WriteString(", by path")
		}
	}
	note, next := page.Note(offset, d.Shown, int64(len(out)))
	if next > 0 {
		n := int(next)
		d.NextOffset = &n
	}
	b.WriteString(note + "]\n")
	var skipped []string
	if n := d.Skipped.Ignored; n > 0 {
		skipped = append(skipped, fmt.Sprintf("%d ignored (.gitignore, .ignore; no_ignore to list them)", n))
	}
	if n := d.Skipped.Hidden; n > 0 {
		skipped = append(skipped, fmt.Sprintf("%d hidden (hidden to list them)", n))
	}
	if n := d.Skipped.Unreadable; n > 0 {
		skipped = append(skipped, fmt.Sprintf("%d directories unreadable", n))
	}
	if len(skipped) > 0 {
		b.WriteString("[not looked at: " + strings.Join(skipped, ", ") + "]\n")
	}
	return outcome.Success(b.String(), d)
}

// Description tells a model when to use glob and what it returns.
const Description = `Find files by name: list the paths under a directory that match a glob (**/*.go, src/**/*_test.go, *.{ts,tsx}), the way git sees the tree: what .gitignore or .ignore ignore, .git and hidden files are left out (say hidden or no_ignore to list them). Use it instead of find or ls -R in the shell.

Returns one path per line, the most recently changed first (sort "path" for alphabetical order), at most 500 (limit), then a line such as [1234 matches, newest first; shown 1-500; next: offset 501]. The pattern matches the whole path from path: *.go is only the .go files directly in path; **/*.go is all of them.`
