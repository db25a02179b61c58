package history

import (
	"fmt"
	"strings"

	"toolkit/internal/outcome"
	"toolkit/internal/text"
)

// maxListed is how many paths a line names; the rest are counted.
const maxListed = 20

// maxLine bounds a line's bytes: past it, the paths left are counted.
const maxLine = 1800

// Lines are the bracketed lines that tell a model what a call changed:
//
//	[changed outside calls since call 16: M README.md]
//	[changed: 3 files — M src/a.go (+12 -3), A b.txt (1.2 KB), D c.txt · call 17]
//	[not restorable: data/big.bin (too large: 220 MB)]
//	[git: HEAD main 1a2b3c4 → main 4d5e6f7]
//
// Nothing is said of what did not change. said leaves out the [changed:]
// line, for a call whose text names its change already (Mark).
func Lines(ch *outcome.Changes, said bool) []string {
	if ch == nil {
		return nil
	}
	var out []string
	if o := ch.Outside; o != nil && len(o.Files) > 0 {
		since := ""
		if o.Since > 0 {
			since = fmt.Sprintf(" since call %d", o.Since)
		}
		out = append(out, fmt.Sprintf("[changed outside calls%s%s: %s]", since, while(o.Jobs), list(o.Files, ch.Call)))
	}
	if len(ch.Files) > 0 && !said {
		tail := fmt.Sprintf(" · call %d", ch.Call)
		if len(ch.During) > 0 {
			var others []string
			for _, d := range ch.During {
				others = append(others, fmt.Sprint(d))
			}
			tail += ", during call " + strings.Join(others, ", ")
		}
		if ch.Interrupted {
			tail += ", which was interrupted"
		}
		out = append(out, fmt.Sprintf("[changed: %s — %s%s]", text.Count(int64(len(ch.Files)), "file"), list(ch.Files, ch.Call), tail))
	}
	if len(ch.Files) > 0 {
		var not []string
		for _, f := range ch.Files {
			if !f.Restorable && f.Why != "" && len(not) < 5 {
				not = append(not, fmt.Sprintf("%s (%s)", text.Escape(f.Path), f.Why))
			}
		}
		if len(not) > 0 {
			out = append(out, "[not restorable: "+strings.Join(not, "; ")+"]")
		}
	}
	if ch.Git != "" {
		out = append(out, "[git: "+ch.Git+"]")
	}
	return out
}

// list names the files, the most maxListed of them and within maxLine.
func list(files []outcome.ChangedFile, call int64) string {
	var b strings.Builder
	for i, f := range files {
		item := f.Status + " " + text.Escape(f.Path) + detail(f)
		if i == maxListed || b.Len()+len(item) > maxLine {
			fmt.Fprintf(&b, " (+%d more: toolkit history %d)", len(files)-i, call)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(item)
	}
	return b.String()
}

// detail is what a line says of one file: its lines added and removed,
// else its size.
func detail(f outcome.ChangedFile) string {
	var parts []string
	switch {
	case f.SaidBy != 0:
		parts = append(parts, fmt.Sprintf("said by call %d", f.SaidBy))
	case strings.HasSuffix(f.Path, "/") && f.Why != "":
		parts = append(parts, f.Why)
	case f.Files > 0:
		parts = append(parts, text.Count(int64(f.Files), "file"))
	case f.Status == "D":
	case f.Kind != "":
		parts = append(parts, f.Kind)
	case f.Added != nil && f.Removed != nil && (*f.Added != 0 || *f.Removed != 0 || f.Mode == ""):
		parts = append(parts, fmt.Sprintf("+%d -%d", *f.Added, *f.Removed))
	case f.Added != nil && f.Removed == nil:
		parts = append(parts, fmt.Sprintf("+%d", *f.Added))
	case f.Mode == "" && !strings.HasSuffix(f.Path, "/"):
		parts = append(parts, text.Bytes(f.Bytes))
	}
	if f.Mode != "" {
		parts = append(parts, "mode "+f.Mode)
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

// Mark adds the call's number to the last line of a text that already
// names its change (write, edit and patch): before its closing bracket,
// or at its end: "… sha256 1a2b3c4d5e6f · call 17"; a call that wrote in
// several trees has a number in each: "· calls 17, 18".
func Mark(textOut string, calls ...int64) string {
	if len(calls) == 0 {
		return textOut
	}
	body, nl := strings.CutSuffix(textOut, "\n")
	i := strings.LastIndexByte(body, '\n') + 1
	last := body[i:]
	mark := fmt.Sprintf(" · call %d", calls[0])
	if len(calls) > 1 {
		var ns []string
		for _, c := range calls {
			ns = append(ns, fmt.Sprint(c))
		}
		mark = " · calls " + strings.Join(ns, ", ")
	}
	if strings.HasSuffix(last, "]") {
		last = last[:len(last)-1] + mark + "]"
	} else {
		last += mark
	}
	out := body[:i] + last
	if nl {
		out += "\n"
	}
	return out
}

// while names the jobs that ran meanwhile, at most three: ", while job
// 3f2a ran".
func while(ids []string) string {
	switch {
	case len(ids) == 0:
		return ""
	case len(ids) == 1:
		return ", while job " + ids[0] + " ran"
	case len(ids) <= 3:
		return ", while jobs " + strings.Join(ids, ", ") + " ran"
	}
	return fmt.Sprintf(", while jobs %s and %d more ran", strings.Join(ids[:3], ", "), len(ids)-3)
}
