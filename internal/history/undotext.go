package history

import (
	"fmt"
	"strings"

	"toolkit/internal/text"
)

// maxSteps is how many paths an undo's text names, a line each; the rest
// are counted.
const maxSteps = 20

// Text is an undo's answer: a line for each path it restored (a directory
// it made or removed with what it held: "recreate vendor/ (1,501 files)"),
// at most maxSteps, then "[undone: call 17 — 3 files restored; 1
// conflict: src/a.go changed since (call 19)]".
func (u UndoResult) Text() string {
	var b strings.Builder
	what := "call " + fmt.Sprint(u.Calls[0])
	if len(u.Calls) > 1 {
		what = fmt.Sprintf("calls %d-%d", u.Calls[0], u.Calls[len(u.Calls)-1])
	}
	verb := "undone"
	if u.DryRun {
		verb = "would undo"
	}
	lines := collapsed(u.Restored)
	for i, l := range lines {
		if i == maxSteps {
			fmt.Fprintf(&b, "(+%d more)\n", len(lines)-i)
			break
		}
		b.WriteString(l + "\n")
	}
	files := 0
	for _, st := range u.Restored {
		if !st.Dir {
			files++
		}
	}
	fmt.Fprintf(&b, "[%s: %s — %s %s", verb, what, text.Count(int64(files), "file"), map[bool]string{true: "to restore", false: "restored"}[u.DryRun])
	if u.NothingToDo && len(u.Conflicts) == 0 && len(u.NotKept) == 0 {
		b.WriteString(": the tree is as it was before")
	}
	if n := len(u.Conflicts); n > 0 {
		fmt.Fprintf(&b, "; %s: %s", text.Count(int64(n), "conflict"), stepsNamed(u.Conflicts, " "))
		if !u.Forced {
			b.WriteString(" (left as it is; force to restore it all the same)")
		}
	}
	if len(u.NotKept) > 0 {
		fmt.Fprintf(&b, "; not restorable: %s", stepsNamed(u.NotKept, " — "))
	}
	if len(u.Left) > 0 {
		fmt.Fprintf(&b, "; left: %s", stepsNamed(u.Left, " — "))
	}
	if u.Forced {
		b.WriteString("; forced")
	}
	b.WriteString("]\n")
	return b.String()
}

// stepsNamed names at most five steps with why each, and counts the rest.
func stepsNamed(steps []UndoStep, sep string) string {
	var names []string
	for _, st := range steps[:min(len(steps), 5)] {
		p := text.Escape(st.Path)
		if st.Dir {
			p += "/"
		}
		names = append(names, p+sep+st.Why)
	}
	if len(steps) > 5 {
		names = append(names, fmt.Sprintf("and %d more", len(steps)-5))
	}
	return strings.Join(names, ", ")
}

// collapsed are the lines that say the steps: a directory made or removed
// with the paths under it that the same action took, one line.
func collapsed(steps []UndoStep) []string {
	var out []string
	for i := 0; i < len(steps); i++ {
		st := steps[i]
		line := st.Action + " " + text.Escape(st.Path)
		if st.Dir {
			line += "/"
		}
		if st.Dir && st.Action != "restore" {
			n := 0
			for i+1 < len(steps) && steps[i+1].Action == st.Action && strings.HasPrefix(steps[i+1].Path, st.Path+"/") {
				if !steps[i+1].Dir {
					n++
				}
				i++
			}
			if n > 0 {
				line += " (" + text.Count(int64(n), "file") + ")"
			}
		}
		out = append(out, line)
	}
	return out
}
