package cmdline

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"toolkit/internal/history"
	"toolkit/internal/outcome"
	"toolkit/internal/state"
)

// Tracks says how a call's changes are found, for history.
type Tracks int

const (
	Untracked Tracks = iota // the applet changes nothing (read, grep, glob)
	Scanned                 // a scan before and after finds them (shell, job)
	Said                    // the applet says them (write, edit, patch: Outcome.Wrote)
)

// The host's settings of history.
var (
	History = &Setting[string]{Name: "history", Env: "TOOLKIT_HISTORY", Model: string(history.Undo),
		Usage: "what every call changed: `MODE` off, report (say it) or undo (say it and keep what undo needs); default undo for JSON input, toolkit mcp and toolkit call, off for a person's command line"}
	HistoryKeeper = &Setting[bool]{Name: "history-keeper", Env: "TOOLKIT_HISTORY_KEEPER", Person: true,
		Usage: "keep a background toolkit for each tree (its keeper: listed and stopped by toolkit job) that watches it with inotify, so that a call looks only at what changed, and captures its first contents; false: every call walks the whole tree, and the first captures its contents before its command runs"}
	HistoryLifetime = &Setting[time.Duration]{Name: "history-lifetime", Env: "TOOLKIT_HISTORY_LIFETIME", Person: history.Defaults.KeeperIdle,
		Usage: "end a tree's keeper after `DURATION` without a call"}
	HistoryMaxFile = &Setting[int]{Name: "history-max-file", Env: "TOOLKIT_HISTORY_MAX_FILE", Person: int(history.Defaults.MaxFile),
		Usage: "keep a file's content for undo up to `BYTES`; a larger one is said, not restorable"}
	HistoryMaxCall = &Setting[int]{Name: "history-max-call", Env: "TOOLKIT_HISTORY_MAX_CALL", Person: int(history.Defaults.MaxCallBytes),
		Usage: "keep at most `BYTES` of new content a call"}
	HistoryStore = &Setting[int]{Name: "history-store", Env: "TOOLKIT_HISTORY_STORE",
		Usage: "cap the store of contents at `BYTES`, oldest first out (default: min(512 MiB, 10% of its file system's free space))"}

	// HistorySettings are the settings of every applet that history follows.
	HistorySettings = []AnySetting{History, HistoryKeeper, HistoryLifetime, HistoryMaxFile, HistoryMaxCall, HistoryStore}
)

// OwnerEnv names the variable through which toolkit mcp tells the calls it
// runs, in it or as child toolkits, that it owns the history keepers they
// start: they end with it ("PID START").
const OwnerEnv = "TOOLKIT_OWNER"

// Owner is this process as OwnerEnv says it.
func Owner() string { return history.Owner() }

// HistoryOff says the host turned history off (--history off): history and
// undo have nothing to show or take back then, and are not offered.
func HistoryOff(s Settings) bool {
	return s != nil && History.Get(s) == string(history.Off)
}

// HistoryOf is the host's history settings for a call; person says the
// input came from a person's command line (off unless asked).
func HistoryOf(s Settings, person bool) history.Settings {
	hs := history.Defaults
	if s == nil {
		return hs
	}
	hs.Mode = history.Mode(History.Get(s))
	if hs.Mode == "" {
		hs.Mode = history.Undo
		if person {
			hs.Mode = history.Off
		}
	}
	hs.Keeper = HistoryKeeper.Get(s)
	if d := HistoryLifetime.Get(s); d > 0 {
		hs.KeeperIdle = d
	}
	if n := HistoryMaxFile.Get(s); n > 0 {
		hs.MaxFile = int64(n)
	}
	if n := HistoryMaxCall.Get(s); n > 0 {
		hs.MaxCallBytes = int64(n)
	}
	hs.StoreCap = int64(max(0, HistoryStore.Get(s)))
	hs.Owner = os.Getenv(OwnerEnv)
	return hs
}

// beginHistory begins a call's history, when the applet is followed and
// history is on; a note says why it is off for the call, when that is
// worth saying.
func (ap Applet[A]) beginHistory(ctx context.Context, a *A, h Host) (*history.Call, string) {
	if ap.Tracks != Scanned || h.Settings == nil {
		return nil, ""
	}
	hs, note := on(h)
	if note != "" || hs.Mode == history.Off {
		return nil, note
	}
	dir, rootDir := "", ""
	if h.Root != nil {
		rootDir = h.Root.Dir()
	}
	if ap.WorkDir != nil {
		// "" where the call works in no directory: a job call that names
		// no job (a list, --stop-all) is no call on a tree.
		if dir = ap.WorkDir(a, h); dir == "" {
			return nil, ""
		}
	}
	if dir == "" {
		dir = rootDir
	}
	if dir == "" {
		dir, _ = os.Getwd()
	}
	tree, why := history.Tree(dir, rootDir)
	if tree == "" {
		if state.FirstTime(why) {
			return nil, "[" + why + "]"
		}
		return nil, ""
	}
	c, err := history.Begin(ctx, ap.Name, tree, ap.Tracks == Scanned, hs)
	switch {
	case err != nil && c == nil:
		return nil, off(err)
	case err != nil:
		// Begun, its scan cut short: its end still says what it finds.
		return c, "[history: " + err.Error() + "]"
	}
	return c, ""
}

// on is the host's history settings for a call, and a note when they are
// wrong.
func on(h Host) (history.Settings, string) {
	hs := HistoryOf(h.Settings, h.Person)
	switch hs.Mode {
	case history.Off, history.Report, history.Undo:
		return hs, ""
	}
	return hs, fmt.Sprintf("[history is off for this call: --history must be off, report or undo, not %q]", hs.Mode)
}

// saidHistory records what a call of an applet that says what it wrote
// (write, edit, patch), begun at began, wrote, in the tree of the first
// file it wrote (history.TreeOfFile).
func saidHistory(ctx context.Context, name string, h Host, began time.Time, o outcome.Outcome) outcome.Outcome {
	if len(o.Wrote) == 0 || h.Settings == nil {
		return o
	}
	hs, note := on(h)
	if note != "" {
		return withLines(o, []string{note})
	}
	if hs.Mode == history.Off {
		return o
	}
	rootDir := ""
	if h.Root != nil {
		rootDir = h.Root.Dir()
	}
	// Each tree the call wrote in records the files it wrote there: a
	// call of its own in each (a patch across two repositories).
	var trees []string
	by := map[string][]outcome.Wrote{}
	for _, w := range o.Wrote {
		tree, _ := history.TreeOfFile(w.Path, rootDir)
		if tree == "" {
			continue // a file of /tmp itself, say: nothing to say
		}
		if by[tree] == nil {
			trees = append(trees, tree)
		}
		by[tree] = append(by[tree], w)
	}
	var all *outcome.Changes
	for _, tree := range trees {
		ch, err := history.Said(ctx, name, tree, hs, began, by[tree])
		if err != nil {
			return tell(o, nil, err, Said)
		}
		if all == nil {
			all = ch
		} else {
			all.Also = append(all.Also, outcome.TreeCall{Call: ch.Call, Files: ch.Files, During: ch.During})
		}
	}
	if all == nil {
		return o
	}
	return tell(o, all, nil, Said)
}

// endHistory ends it: what the call changed goes into the outcome, as
// "changes" and as lines of its text.
func endHistory(ctx context.Context, c *history.Call, tracks Tracks, o outcome.Outcome) outcome.Outcome {
	ch, err := c.End(ctx, o.Wrote)
	return tell(o, ch, err, tracks)
}

// tell puts what a call changed (ch), or why history could not say it
// (err), into its outcome.
func tell(o outcome.Outcome, ch *outcome.Changes, err error, tracks Tracks) outcome.Outcome {
	if err != nil {
		return withLines(o, []string{off(err)})
	}
	if ch.Said() {
		o.Changes = ch // only where it says something
	}
	if o.Kind != outcome.Done {
		return o
	}
	if tracks != Said {
		return withLines(o, history.Lines(ch, false))
	}
	// Its text names its change already: the call's number is added to
	// it (each tree's, where it wrote in several), and what it does not
	// say follows it.
	each := []*outcome.Changes{ch}
	for _, t := range ch.Also {
		each = append(each, &outcome.Changes{Call: t.Call, Files: t.Files, During: t.During})
	}
	var calls []int64
	for _, c := range each {
		if len(c.Files) > 0 {
			calls = append(calls, c.Call)
		}
	}
	o.Text = history.Mark(o.Text, calls...)
	for _, c := range each {
		for _, l := range history.Lines(c, true) {
			o.Text += l + "\n"
		}
	}
	return o
}

// withLines puts bracketed lines into a done outcome's text, before its
// last line (shell's [exit N], which stays last), and into its epilogue.
func withLines(o outcome.Outcome, lines []string) outcome.Outcome {
	if len(lines) == 0 || o.Kind != outcome.Done {
		return o
	}
	add := strings.Join(lines, "\n") + "\n"
	o.Text = beforeLast(o.Text, add)
	if o.Epilogue != "" {
		o.Epilogue = beforeLast(o.Epilogue, add)
	}
	return o
}

// beforeLast puts add before the last line of s.
func beforeLast(s, add string) string {
	body := strings.TrimSuffix(s, "\n")
	i := strings.LastIndexByte(body, '\n') + 1
	return s[:i] + add + s[i:]
}

// off is the line that says history is off for a call, because of err:
// it could not be kept (its store's file system full or read-only, say),
// and the call went on without it.
func off(err error) string { return "[history is off for this call: " + err.Error() + "]" }
