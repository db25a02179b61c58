// Package edit changes part of a file: each edit replaces a piece of text the
// model quotes with a new one, all of them or none.
//
//	toolkit edit [flags] PATH --old TEXT --new TEXT [--old TEXT --new TEXT …] [--all]
//	echo '{"path":"a.go","edits":[{"old_text":"x := 1","new_text":"x := 2"}]}' | toolkit edit
//
// The edits apply in order, each to the text the ones before it left. Each
// old_text must be in the file exactly once (or, with replace_all, at least
// once); where it is not there as it is, internal/match tries looser levels
// (line endings, trailing blanks, indentation, Unicode look-alikes), each
// taken only where exactly one place matches, and the result says per edit
// how it matched. Several places are an error listing their lines; none is an
// error showing the closest region and its first line that differs.
//
// The bytes outside the edited places stay as they are: a BOM, line endings,
// tabs, a missing final newline, invalid UTF-8. new_text takes the line ends
// of the place it replaces, and at the indentation level its indentation.
// A UTF-16 or UTF-32 file is edited in its encoding; a binary file is refused
// as read refuses it. The file is written through internal/replace, as write
// writes: if it changed between toolkit's read and its rename, nothing is
// written and the edit is a conflict. The text is a unified diff of the
// change, then one line:
//
//	[edited notes.txt: 2 edits (exact, indentation); lines 40-44, 88; sha256 1a2b3c4d5e6f (was 9f2c01ab34cd)]
package edit

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"toolkit/internal/cmdline"
	"toolkit/internal/diag"
	"toolkit/internal/diff"
	"toolkit/internal/history/track"
	"toolkit/internal/input"
	"toolkit/internal/outcome"
	"toolkit/internal/replace"
	"toolkit/internal/root"
	"toolkit/internal/text"
)

// Args is the input of one edit call.
type Args struct {
	Path    string  `json:"path" flag:"PATH" check:"required,nonempty,nonul" desc:"The file to change. Relative paths start at the working directory (at the root with --root); ~ is the home directory."`
	Edits   []Edit  `json:"edits" check:"required" desc:"The changes, applied in order, each to the text the ones before it left; if any fails, nothing is written."`
	IfMatch *string `json:"if_match,omitempty" flag:"--if-match SHA256" usage:"edit only if the file's sha256 starts with SHA256" check:"ifmatch" desc:"Edit only if the file's sha256 is this, or starts with this (12 or more hex digits; read gives it)."`
	DryRun  bool    `json:"dry_run,omitempty" flag:"--dry-run" usage:"show the diff; write nothing" desc:"Show the diff of the change and write nothing."`
	diag.Fields

	// Host holds the settings a host chooses, not the model.
	Host Options `json:"-"`
}

// Edit is one change: old_text replaced, or, with insert_line, new_text
// put in as lines of their own.
type Edit struct {
	OldText    string `json:"old_text,omitempty" desc:"The text to replace, quoted from the file (without read's line numbers): enough lines around the change to be found in one place only. Required unless insert_line is given."`
	NewText    string `json:"new_text" check:"required" desc:"What to put in its place."`
	ReplaceAll bool   `json:"replace_all,omitempty" desc:"Replace every place old_text is, not only one."`
	InsertLine *int   `json:"insert_line,omitempty" check:"min=0" desc:"Instead of old_text: put new_text in as lines of their own after this line (0: before the first), in the file's line endings."`
}

// Options are the host's settings for an edit.
type Options struct {
	// Root, when set, confines the path.
	Root *root.Root
}

// Details are the facts of an edit for --json.
type Details struct {
	Path           string       `json:"path"`
	SHA256         string       `json:"sha256"`
	PreviousSHA256 string       `json:"previous_sha256"`
	Edits          []EditResult `json:"edits"`
	Diff           string       `json:"diff"`
	Bytes          int64        `json:"bytes"`
	Lines          int64        `json:"lines"`
	DryRun         bool         `json:"dry_run"`
	// Unchanged says the edits, matched loosely, leave the file's bytes as
	// they are: nothing was written.
	Unchanged bool `json:"unchanged,omitempty"`
}

// EditResult says how one edit went.
type EditResult struct {
	Index        int    `json:"index"`
	Matched      string `json:"matched"` // exact, line_endings, trailing_space, indentation, unicode; insert for insert_line
	Replacements int    `json:"replacements"`
	// LookAlikes, at the unicode level, names the characters that differed:
	// "“ ” for \"".
	LookAlikes string `json:"look_alikes,omitempty"`
	FirstLine  int    `json:"first_line"` // in the new text, from 1
	LastLine   int    `json:"last_line"`
}

const usage = "toolkit edit [flags] PATH --old TEXT --new TEXT [--all]"

// Applet is edit's command line and in-process call.
var Applet = cmdline.Applet[Args]{
	Name:           "edit",
	Usage:          "change part of a file: replace the text quoted, all edits or none",
	Synopsis:       usage,
	Example:        `{"path":"main.go","edits":[{"old_text":"x := 1","new_text":"x := 2"}]}`,
	Description:    Description,
	Details:        Details{},
	Hints:          cmdline.Hints{Destructive: true},
	FlagsAfterArgs: true,
	Settings:       cmdline.JoinSettings(track.Settings, diag.Settings),
	Around:         []cmdline.Around{diag.Around, track.Said},
	Flags: []cli.Flag{
		cmdline.TextsFlag("old", "the `TEXT` to replace (repeatable, each with its --new)"),
		cmdline.TextsFlag("new", "the `TEXT` to put in its place"),
		&cli.BoolFlag{Name: "all", Usage: "replace every place, for every edit"},
		&cli.StringFlag{Name: "edits", Usage: "the edits as a JSON array in `FILE`"},
	},
	Person: fromFlags,
	Run: func(ctx context.Context, a *Args, h cmdline.Host) outcome.Outcome {
		a.Host = Options{Root: h.Root}
		return Run(ctx, *a)
	},
}

func fromFlags(c *cli.Context, a *Args) error {
	if file := c.String("edits"); file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			return cmdline.ToolError(fmt.Sprintf("%s: cannot read: %s", file, root.Reason(err)))
		}
		var w struct {
			Edits []Edit `json:"edits"`
		}
		if err := input.Decode(append(append([]byte(`{"edits":`), b...), '}'), &w); err != nil {
			return fmt.Errorf("--edits %s: %w", file, err)
		}
		a.Edits = w.Edits
	}
	olds, news := cmdline.TextsOf(c, "old"), cmdline.TextsOf(c, "new")
	if len(olds) != len(news) {
		return fmt.Errorf("each --old needs its --new: %d --old and %d --new", len(olds), len(news))
	}
	for i := range olds {
		a.Edits = append(a.Edits, Edit{OldText: olds[i], NewText: news[i], ReplaceAll: c.Bool("all")})
	}
	if len(a.Edits) == 0 {
		return errors.New("no edits: give --old TEXT --new TEXT, or --edits FILE")
	}
	return nil
}

// Run applies the edits to one file.
func Run(ctx context.Context, a Args) outcome.Outcome {
	if len(a.Edits) == 0 {
		return outcome.Misuse(`"edits" must hold at least one edit`)
	}
	for i, e := range a.Edits {
		switch {
		case e.InsertLine != nil && (e.OldText != "" || e.ReplaceAll):
			return outcome.Misuse("edits[%d]: insert_line goes without old_text and replace_all: it replaces nothing", i)
		case e.InsertLine != nil:
		case e.OldText == "":
			return outcome.Misuse("edits[%d]: give old_text, the text to replace, or insert_line", i)
		case e.NewText == e.OldText:
			return outcome.Misuse("edits[%d]: new_text is the same as old_text: nothing would change", i)
		}
	}
	r := a.Host.Root
	// The name as the lines below say it: a newline in it cannot pass for
	// a line of their own.
	name := text.Escape(a.Path)
	target, err := r.Resolve(a.Path)
	if err != nil {
		return outcome.Failure("%s: %s", name, replace.Reason(err))
	}
	orig, err := replace.ReadWhole(r, target)
	if err != nil {
		return outcome.Failure("%s: %s", name, replace.Reason(err))
	}
	enc, err := text.Binary(orig[:min(len(orig), text.SniffSize)], int64(len(orig)))
	if err != nil {
		return outcome.Failure("%s: %s; not edited", name, err)
	}
	// The sha256 only when it is asked for, or the edits apply: a quote
	// that is not there is answered without hashing the file.
	hash := func() string { return replace.SHA256(orig) }
	was := ""
	if a.IfMatch != nil {
		was = hash()
		if err := replace.IfMatch(*a.IfMatch).Check(&was); err != nil {
			return outcome.Failure("%s: %s", name, err)
		}
	}
	body := text.Decode(orig, enc)
	if enc.Unit != 0 && !bytes.Equal(text.Encode(body, enc), orig) {
		return outcome.Failure("%s: %s text that does not decode cleanly; not edited", name, enc.Name)
	}

	ed := &editor{text: body}
	var levels []string
	for i, e := range a.Edits {
		if err := ctx.Err(); err != nil {
			return outcome.Failure("%s: stopped: %s", name, context.Cause(ctx))
		}
		res, err := ed.apply(i, e)
		var beyond *errBeyond
		switch {
		case errors.As(err, &beyond):
			return outcome.Misuse("%s", err)
		case err != nil:
			return outcome.Failure("%s: %s; nothing was written", name, err)
		}
		level := res.Matched
		if res.LookAlikes != "" {
			level += ": " + res.LookAlikes
		}
		levels = append(levels, level)
	}
	results := ed.ranges
	if was == "" {
		was = hash()
	}
	newBytes := text.Encode(ed.text, enc)
	diff := diff.Unified(a.Path, body, ed.text)
	now := replace.SHA256(newBytes)

	d := Details{
		Path: a.Path, SHA256: now, PreviousSHA256: was, Edits: results, Diff: diff,
		Bytes: int64(len(newBytes)), Lines: int64(text.LineCount(ed.text)), DryRun: a.DryRun,
	}
	if bytes.Equal(newBytes, orig) {
		// Matched loosely, and the file already reads as the edits would
		// leave it: said so, and nothing written.
		d.Unchanged, d.Diff = true, ""
		which := "the edit"
		if len(a.Edits) > 1 {
			which = fmt.Sprintf("the %d edits", len(a.Edits))
		}
		return outcome.Success(fmt.Sprintf("[%s unchanged: it already reads as %s would leave it (matched: %s); nothing was written; sha256 %s]\n", name, which, strings.Join(levels, ", "), now[:12]), d)
	}
	verb := "edited"
	if a.DryRun {
		verb = "would edit"
	} else {
		staged, err := replace.Stage(r, target, func(w io.Writer) error {
			_, err := w.Write(newBytes)
			return err
		})
		if err != nil {
			return outcome.Failure("%s", replace.CannotWrite(name, err))
		}
		res, err := staged.Commit(replace.Expect{SHA256: was})
		var changed *replace.Changed
		switch {
		case errors.As(err, &changed):
			return outcome.Failure("%s: changed while it was edited, by someone else (sha256 now %s); nothing was written: read it again", name, shaOf(changed.Now))
		case err != nil:
			return outcome.Failure("%s", replace.CannotWrite(name, err))
		}
		if res.InPlace != "" {
			diff += fmt.Sprintf("[written in place: %s; not atomic]\n", res.InPlace)
		}
	}
	tail := fmt.Sprintf("[%s %s: %s (%s); %s; sha256 %s (was %s)]\n", verb, name, text.Count(int64(len(a.Edits)), "edit"), strings.Join(levels, ", "), lineRanges(results), now[:12], was[:12])
	o := outcome.Success(diff+tail, d)
	if !a.DryRun {
		path, _ := r.HostPath(target)
		path, _ = filepath.Abs(path)
		o.Wrote = []outcome.Wrote{{Path: path, Before: orig, Existed: true, After: newBytes, Exists: true}}
	}
	return o
}

func shaOf(s *string) string {
	if s == nil {
		return "none: it was removed"
	}
	return (*s)[:12]
}

// lineRanges says where the edits are in the new text: "lines 40-44, 88".
func lineRanges(rs []EditResult) string {
	var parts []string
	for _, r := range rs {
		if r.FirstLine == r.LastLine {
			parts = append(parts, fmt.Sprint(r.FirstLine))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", r.FirstLine, r.LastLine))
		}
	}
	word := "lines "
	if len(parts) == 1 && !strings.Contains(parts[0], "-") {
		word = "line "
	}
	return word + strings.Join(parts, ", ")
}

// Description tells a model when to use edit and what it returns.
const Description = `Change part of a file in the sandbox: replace a piece of its text with another. Prefer it to write for any change to an existing file: you give only what changes, and the rest of the file, its line endings, tabs and encoding, stays exactly as it was.

Each edit's old_text is text quoted from the file (without read's line numbers and tabs), with enough lines around the change to be found in one place only; new_text replaces it. Several edits apply in order, each to the text the ones before it left; if one fails, nothing is written. When old_text is not in the file as it is, looser matches are tried in turn, each taken only where exactly one place matches: line endings, trailing blanks, indentation (tabs against spaces, or the block shifted: new_text is re-indented the same way), and look-alike characters (curly quotes, dashes). If old_text is in several places the error lists their lines: quote more, or set replace_all. If it is nowhere, the error shows the closest lines and the first one that differs.

Returns a unified diff of the change and a last line with the lines changed, how each edit matched, and the file's new sha256. Pass if_match (the sha256 read gave) to be sure the file did not change since you read it; dry_run shows the diff and writes nothing.`
