package history

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"toolkit/internal/diff"
	"toolkit/internal/history/log"
	"toolkit/internal/history/pack"
	"toolkit/internal/outcome"
)

// CallInfo is a call as the history applet lists it.
type CallInfo struct {
	Call        int64                 `json:"call"`
	Tool        string                `json:"tool"`
	Tree        string                `json:"tree"`
	Began       time.Time             `json:"began"`
	Ended       bool                  `json:"ended"`
	Interrupted bool                  `json:"interrupted,omitempty"`
	Files       []outcome.ChangedFile `json:"files"`
	Outside     *outcome.Outside      `json:"outside,omitempty"`
	Undid       []int64               `json:"undid,omitempty"`
	Git         string                `json:"git,omitempty"`
	During      []int64               `json:"during,omitempty"`
}

// calls reads the log as calls, by number.
func (h *history) calls() (map[int64]*callState, []int64, error) {
	recs, err := log.Read(h.dir)
	if err != nil {
		return nil, nil, err
	}
	byN := map[int64]*callState{}
	var order []int64
	for _, r := range recs {
		c := byN[r.Call]
		if c == nil {
			c = &callState{n: r.Call}
			byN[r.Call] = c
			order = append(order, r.Call)
		}
		// A said call's one record begins and ends it.
		if r.Begin != nil {
			c.tree, c.tool, c.began = log.Named(r.Tree, r.RawTree), r.Tool, *r.Begin
		}
		if r.End != nil {
			c.endedAt, c.said = *r.End, r.Said
			end := r
			c.ended, c.end, c.hasFiles, c.hasOutside, c.since, c.jobs = true, &end, bool(r.HasFiles), bool(r.HasOutside), r.Since, r.Jobs
			c.interrupted, c.undid, c.git, c.during = r.Interrupted, r.Undid, r.Git, r.During
			c.h = h
		}
	}
	return byN, order, nil
}

// noLongerKept is why a change cannot be taken back once the store's cap
// pushed out the content before it.
const noLongerKept = "no longer undoable: its content before went from the store, oldest first, to keep it within its cap"

// stillKept is files as the store holds them now: a content before that
// the store no longer holds is no longer kept, and its change no longer
// undoable. The log keeps what each call changed all the same.
func (h *history) stillKept(files []log.File) []log.File {
	if h.store == nil {
		return files
	}
	for i := range files {
		f := &files[i]
		if f.PreKept && f.Why == "" && !h.store.HasHex(f.Pre) {
			f.PreKept, f.Why = false, noLongerKept
		}
	}
	return files
}

// callState is a call as the log says it. Its files are read from the
// log's line when asked for (files, outside): a history of many large
// calls is not decoded whole for the one a query or an undo is about.
type callState struct {
	n           int64
	tree, tool  string
	began       time.Time
	ended       bool
	endedAt     time.Time
	said        bool      // its changes were said, not scanned
	end         *log.Line // its end's line of the log
	hasFiles    bool
	hasOutside  bool
	decoded     []log.File // files, once asked for
	h           *history
	since       int64
	jobs        []string
	interrupted bool
	undid       []int64
	git         string
	during      []int64
}

// files is what the call changed, as the store holds their contents now:
// decoded once.
func (c *callState) files() []log.File {
	if c.hasFiles && c.decoded == nil {
		files, _ := c.end.Lists()
		c.decoded = c.h.stillKept(files)
		if c.decoded == nil {
			c.decoded = []log.File{}
		}
	}
	return c.decoded
}

// outside is what changed before the call, outside calls.
func (c *callState) outside() []log.File {
	if !c.hasOutside {
		return nil
	}
	_, outside := c.end.Lists()
	return outside
}

// changedAny says whether the call says any change.
func (c *callState) changedAny() bool {
	return c.hasFiles || c.hasOutside || len(c.undid) > 0
}

func (c *callState) info() CallInfo {
	ci := CallInfo{Call: c.n, Tool: c.tool, Tree: c.tree, Began: c.began, Ended: c.ended, Interrupted: c.interrupted, Files: changed(c.files()), Undid: c.undid, Git: c.git, During: c.during}
	if ci.Files == nil {
		ci.Files = []outcome.ChangedFile{}
	}
	if outside := c.outside(); len(outside) > 0 {
		ci.Outside = &outcome.Outside{Since: c.since, Files: changed(outside), Jobs: c.jobs}
	}
	return ci
}

// List is the calls, newest first, that changed something (or all of them
// with all), from offset on, at most limit; and how many there are.
func List(all bool, offset, limit int) ([]CallInfo, int, error) {
	h, err := open(Settings{Mode: Undo, StoreCap: 1 << 62})
	if err != nil {
		return nil, 0, err
	}
	defer h.close()
	byN, order, err := h.calls()
	if err != nil {
		return nil, 0, err
	}
	var said []*callState
	for _, n := range slices.Backward(order) {
		if c := byN[n]; all || c.changedAny() {
			said = append(said, c)
		}
	}
	total := len(said)
	said = said[min(offset, len(said)):]
	var out []CallInfo
	for _, c := range said[:min(limit, len(said))] {
		out = append(out, c.info())
	}
	return out, total, nil
}

// Show is one call, and with withDiff the unified diff of its text files
// whose contents before and after are kept.
func Show(n int64, withDiff bool) (CallInfo, string, error) {
	h, err := open(Settings{Mode: Undo, StoreCap: 1 << 62})
	if err != nil {
		return CallInfo{}, "", err
	}
	defer h.close()
	byN, _, err := h.calls()
	if err != nil {
		return CallInfo{}, "", err
	}
	c := byN[n]
	if c == nil {
		return CallInfo{}, "", fmt.Errorf("no call %d in this state directory's history", n)
	}
	if !withDiff {
		return c.info(), "", nil
	}
	var b strings.Builder
	for _, f := range c.files() {
		if f.Dir {
			continue
		}
		before, okB := h.content(f.Pre, f.Status == "A")
		after, okA := h.content(f.Post, f.Status == "D")
		switch {
		case !okB || !okA:
			fmt.Fprintf(&b, "[%s %s: its content %s is not kept]\n", f.Status, f.Path, map[bool]string{true: "after", false: "before"}[okB])
		case !isText(before) || !isText(after):
			fmt.Fprintf(&b, "[%s %s: binary]\n", f.Status, f.Path)
		default:
			from, to := f.Path, f.Path
			switch f.Status {
			case "A":
				from = ""
			case "D":
				to = ""
			}
			b.WriteString(diff.UnifiedFiles(from, to, before, after))
		}
	}
	return c.info(), b.String(), nil
}

// content is the kept content of sum (hex); none is an empty content when
// the file was not there.
func (h *history) content(sum string, none bool) ([]byte, bool) {
	if none {
		return nil, true
	}
	if sum == "" || h.store == nil {
		return nil, false
	}
	s, ok := pack.ParseSum(sum)
	if !ok {
		return nil, false
	}
	b, err := h.store.Get(s)
	return b, err == nil
}

// Content is a file's content before a call, and whether it was there.
type Content struct {
	Content []byte
	Existed bool
}

// Before is the tree of call n, and the content before it of each of the
// files rels it changed whose content is kept, up to most bytes: what a
// check of a shell call's files compares against. A file left out of the
// map has no content before that can be had.
func Before(n int64, rels []string, most int64) (string, map[string]Content, error) {
	h, err := open(Settings{Mode: Undo, StoreCap: 1 << 62})
	if err != nil {
		return "", nil, err
	}
	defer h.close()
	byN, _, err := h.calls()
	if err != nil {
		return "", nil, err
	}
	c := byN[n]
	if c == nil {
		return "", nil, fmt.Errorf("no call %d in this state directory's history", n)
	}
	out := map[string]Content{}
	for _, f := range c.files() {
		if f.Dir || !slices.Contains(rels, f.Path) {
			continue
		}
		if f.Status == "A" {
			out[f.Path] = Content{}
			continue
		}
		if b, ok := h.content(f.Pre, false); ok && int64(len(b)) <= most {
			out[f.Path] = Content{Content: b, Existed: true}
		}
	}
	return c.tree, out, nil
}
