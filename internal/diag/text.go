package diag

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"toolkit/internal/outcome"
	"toolkit/internal/text"
)

// MaxShown is how many diagnostics a call's text lists; the rest are
// counted.
const MaxShown = 20

var errTimedOut = errors.New("diagnostics: the call's wait is over")

// whyNot says why c gave no answer for a file.
func whyNot(c *checker, err error, ask Ask) string {
	if errors.Is(err, errTimedOut) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Sprintf("%s did not answer in %s", c.by, secs(ask.Wait))
	}
	return fmt.Sprintf("%s could not run: %s", c.by, err)
}

func seconds(d time.Duration) float64 { return math.Round(d.Seconds()*1000) / 1000 }

// secs is a wait as the text says it: "5 s", "0.5 s".
func secs(d time.Duration) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.1f", d.Seconds()), "0"), ".") + " s"
}

// Lines are the bracketed block that tells a model what a check found:
//
//	[diagnostics: 2 new errors in a.go (syntax only: gofmt; 0.0 s); 3 already there]
//	a.go:42:5: error: expected ';', found foo
//	[diagnostics: not checked — b.kt: no checker for .kt]
//
// With all asked, every current diagnostic is listed, the new ones marked.
func Lines(d *outcome.Diagnostics, all bool) []string {
	if d == nil {
		return nil
	}
	if d.TooMany > 0 {
		return []string{fmt.Sprintf("[diagnostics: %s changed, none checked — toolkit diagnostics checks them]", text.Count(int64(d.TooMany), "source file"))}
	}
	var out []string
	if len(d.Checked) > 0 {
		out = append(out, head(d, all))
		shown := d.New
		if all {
			shown = d.All
		}
		for i, x := range shown {
			if i == MaxShown {
				out = append(out, fmt.Sprintf("[… %d more]", len(shown)-MaxShown))
				break
			}
			mark := ""
			if all && slices.Contains(d.New, x) {
				mark = " (new)"
			}
			out = append(out, Line(x)+mark)
		}
	}
	if len(d.Elsewhere) > 0 {
		var files []string
		for _, x := range d.Elsewhere {
			if p := text.Escape(x.Path); !slices.Contains(files, p) {
				files = append(files, p)
			}
		}
		out = append(out, fmt.Sprintf("[diagnostics: %s in other files, not there before: %s]", text.Count(int64(len(d.Elsewhere)), "new error"), list(files)))
		for i, x := range d.Elsewhere {
			if i == MaxShown/2 {
				out = append(out, fmt.Sprintf("[… %d more]", len(d.Elsewhere)-MaxShown/2))
				break
			}
			out = append(out, Line(x))
		}
	}
	if nc := NotChecked(d.NotChecked); nc != "" {
		out = append(out, nc)
	}
	return out
}

// NotChecked is the line that says which files were not checked, and
// why: the files of each reason together.
func NotChecked(ns []outcome.NotChecked) string {
	if len(ns) == 0 {
		return ""
	}
	var whys []string
	by := map[string][]string{}
	for _, n := range ns {
		if by[n.Why] == nil {
			whys = append(whys, n.Why)
		}
		by[n.Why] = append(by[n.Why], text.Escape(n.Path))
	}
	var parts []string
	for _, why := range whys {
		parts = append(parts, list(by[why])+": "+why)
	}
	return "[diagnostics: not checked — " + strings.Join(parts, "; ") + "]"
}

// head is the block's first line: how many new, in which files, by what.
func head(d *outcome.Diagnostics, all bool) string {
	var files, by, whys []string
	exact, syntax := true, true
	for _, c := range d.Checked {
		files = append(files, text.Escape(c.Path))
		if !slices.Contains(by, c.By) {
			by = append(by, c.By)
		}
		if c.Why != "" && !slices.Contains(whys, c.Why) {
			whys = append(whys, c.Why)
		}
		exact = exact && c.Baseline
		syntax = syntax && c.Tier == "syntax"
	}
	checkers := strings.Join(by, ", ")
	if syntax {
		checkers = "syntax only: " + checkers
	}
	if len(whys) > 0 {
		checkers += " — " + strings.Join(whys, ", ")
	}
	errs, warns := 0, 0
	for _, x := range d.New {
		if x.Severity == Error {
			errs++
		} else {
			warns++
		}
	}
	var what string
	switch {
	case errs == 0 && warns == 0:
		what = "no new errors"
	case warns == 0:
		what = text.Count(int64(errs), "new error")
	case errs == 0:
		what = text.Count(int64(warns), "new warning")
	default:
		what = text.Count(int64(errs), "new error") + " and " + text.Count(int64(warns), "warning")
	}
	s := fmt.Sprintf("[diagnostics: %s in %s (%s; %.1f s)", what, list(files), checkers, d.Seconds)
	if d.Already > 0 {
		s += fmt.Sprintf("; %d already there", d.Already)
	}
	if all {
		s += fmt.Sprintf("; %d in all", len(d.All))
	}
	if !exact {
		s += "; the content before could not be checked: errors on the changed lines are new"
	}
	return s + "]"
}

// list names files, the first five, the rest counted.
func list(files []string) string {
	if len(files) > 5 {
		return strings.Join(files[:5], ", ") + fmt.Sprintf(" and %d more", len(files)-5)
	}
	return strings.Join(files, ", ")
}

// Line is one diagnostic as the text lists it, as compilers print them:
// "a.go:42:5: error: undefined: foo".
func Line(x outcome.Diagnostic) string {
	at := fmt.Sprintf("%s:%d", text.Escape(x.Path), x.Line)
	if x.Col > 0 {
		at += fmt.Sprintf(":%d", x.Col)
	}
	msg := strings.Join(strings.Fields(x.Message), " ") // one line
	if x.Code != "" {
		msg += " [" + x.Code + "]"
	}
	return fmt.Sprintf("%s: %s: %s", at, x.Severity, msg)
}
