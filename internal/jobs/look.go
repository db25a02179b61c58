package jobs

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"

	"toolkit/internal/clean"
	"toolkit/internal/confine"
	"toolkit/internal/cut"
	"toolkit/internal/proc"
)

// LookOptions say how to look at a job.
type LookOptions struct {
	// Wait is how long to wait for the job to end, for Until to match its
	// new output, or for it to wait for input.
	Wait  time.Duration
	Until *regexp.Regexp
	// MaxOutput cuts the new text as shell cuts a command's; Raw keeps
	// escapes and carriage returns.
	MaxOutput int
	Raw       bool
	// Running is the last line while the job runs; default
	// "[still running as job ID]".
	Running string
}

// View is what a look saw.
type View struct {
	Text     string
	Running  bool
	Waiting  bool        // blocked reading its input
	Matched  bool        // Until matched the new output
	Ending   proc.Ending // how the command ended, once it has
	NewBytes int64       // bytes of the log shown
	Lines    int64       // lines of text they made
	Cut      *cut.Result // set when the new text was cut
	Log      string
}

// pollEvery is how often a look that waits looks again.
const pollEvery = 20 * time.Millisecond

// quietBeforeWaiting is how long the output must have been quiet before
// a job blocked reading its input counts as waiting for it: the input just
// sent may not have been read yet, nor its answer written.
const quietBeforeWaiting = 150 * time.Millisecond

// Look shows the job's output since the last look, cleaned and cut as
// shell's, then how it ended or that it still runs. Looks at one job take
// turns, so no two show the same output.
func Look(ctx context.Context, j *Job, o LookOptions) (View, error) {
	lock, err := os.OpenFile(filepath.Join(j.Dir, "lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return View{}, err
	}
	defer lock.Close()
	if err := lockFile(lock, o.Wait+5*time.Second); err != nil {
		return View{}, err
	}
	var seen Seen
	_ = readJSON(filepath.Join(j.Dir, "look.json"), &seen)
	v := View{Log: j.Log()}
	// until looks at the output no until matched in yet, shown or not:
	// what the call that started the job showed counts (but no more than
	// maxMatchText of what was shown).
	var matchedTo int64
	v.Matched, v.Waiting, matchedTo = j.wait(ctx, max(seen.Matched, seen.Offset-maxMatchText, 0), o)
	if v.Matched {
		seen.Matched = matchedTo
	}

	v.Running = j.Running()
	if v.Running && !v.Waiting {
		v.Waiting = j.waitingDrained()
	}
	size := logSize(j)
	// While the job runs, a character or an escape sequence cut by the end
	// of what has come so far waits for the next look, which shows it whole.
	text, res, held, err := render(j, seen.Offset, size, o, j.Running())
	if err != nil {
		return View{}, err
	}
	size -= held
	v.NewBytes, v.Lines = size-seen.Offset, res.TotalLines
	if res.Cut {
		v.Cut = &res
	}
	var b strings.Builder
	b.WriteString(text)
	if text != "" && !strings.HasSuffix(text, "\n") {
		b.WriteByte('\n')
	}
	for _, n := range confine.Notes(text, j.Spec.Writable) {
		b.WriteString(n + "\n")
	}
	v.Ending = proc.NoStatus
	if j.Status.Wait != nil {
		v.Ending = proc.EndingOf(syscall.WaitStatus(*j.Status.Wait))
	}
	if v.Running {
		if j.Status.Wait != nil {
			fmt.Fprintf(&b, "[its command ended (%s); processes it started still run]\n", strings.Trim(v.Ending.Line, "[]"))
		}
		if v.Waiting {
			b.WriteString("[waiting for input]\n")
		}
		last := o.Running
		if last == "" {
			last = "[still running as job " + j.ID + "]"
		}
		b.WriteString(last + "\n")
	} else {
		for _, n := range j.endNotes() {
			b.WriteString(n + "\n")
		}
		b.WriteString(v.Ending.Line + "\n")
		seen.EndShown = time.Now()
	}
	seen.Offset = size
	if err := writeJSON(filepath.Join(j.Dir, "look.json"), seen); err != nil {
		return View{}, err
	}
	v.Text = b.String()
	return v, nil
}

// wait waits as o says, and reports whether Until matched the output from
// from on, whether the job is waiting for input, and how far in the log the
// matcher had read when it matched.
func (j *Job) wait(ctx context.Context, from int64, o LookOptions) (matched, waiting bool, at int64) {
	if o.Wait <= 0 && o.Until == nil {
		return false, false, 0
	}
	deadline := time.Now().Add(o.Wait)
	m := matcher{re: o.Until, at: from, raw: o.Raw}
	lastSize, lastGrowth := logSize(j), time.Now()
	for {
		if err := j.Refresh(); err != nil || !j.Running() {
			return m.match(j), false, m.at
		}
		size := logSize(j)
		if size != lastSize {
			lastSize, lastGrowth = size, time.Now()
		}
		if m.match(j) {
			return true, false, m.at
		}
		if time.Since(lastGrowth) >= quietBeforeWaiting && j.waitingDrained() {
			// What it printed before it sat down to read is in the log now,
			// which the match above may not have seen: the match wins.
			if m.match(j) {
				return true, false, m.at
			}
			return false, true, 0
		}
		left := time.Until(deadline)
		if left <= 0 {
			return false, false, 0
		}
		select {
		case <-ctx.Done():
			return false, false, 0
		case <-time.After(min(pollEvery, left)):
		}
	}
}

// waitingDrained reports whether the job waits for input, decided only
// once everything it wrote before it sat down to read is in its log: the
// keeper may not have copied its last line yet when a look sees it
// blocked. A job the keeper cannot answer for in time is not said to wait.
func (j *Job) waitingDrained() bool {
	return j.WaitingForInput() && j.Drained(2*time.Second) && j.WaitingForInput()
}

// logSize is how much of the job's output its log holds.
func logSize(j *Job) int64 {
	fi, err := os.Stat(j.Log())
	if err != nil {
		return 0
	}
	return fi.Size()
}

// maxMatchText is how far back in what was shown until looks, in the
// log's bytes: what the call that started the job showed counts.
const maxMatchText = 1 << 20

// maxMatchLine bounds a line until is matched against: the first
// maxMatchLine bytes of a longer one.
const maxMatchLine = 64 << 10

// matcher matches Until against the job's new output as it comes, a line
// at a time (and the line being written, such as a prompt with no line
// end), reading the log in blocks: its memory is a block and a line,
// whatever the log holds.
// Until watches a job's output for a regular expression, as a look's until
// does, from a byte of its log on, taking nothing from the looks (a wait's
// job condition).
type Until struct {
	m matcher
	j *Job
}

// NewUntil watches j's output for re from the log's byte from on (raw:
// escapes kept).
func NewUntil(j *Job, re *regexp.Regexp, from int64, raw bool) *Until {
	return &Until{m: matcher{re: re, at: from, raw: raw}, j: j}
}

// Matched says whether re matched the output so far.
func (u *Until) Matched() bool { return u.m.match(u.j) }

// LogSize is how much output the job's log holds.
func LogSize(j *Job) int64 { return logSize(j) }

type matcher struct {
	re    *regexp.Regexp
	at    int64 // the log's bytes cleaned so far
	raw   bool
	cl    *clean.Cleaner
	buf   bytes.Buffer // cleaned text not matched yet: part of a line at most
	skip  bool         // the line in buf was matched at its bound: drop it to its end
	block []byte
}

func (m *matcher) match(j *Job) bool {
	if m.re == nil {
		return false
	}
	if m.cl == nil {
		m.cl = clean.New(&m.buf, m.raw)
		m.block = make([]byte, blockSize)
	}
	if size := logSize(j); size > m.at {
		f, err := os.Open(j.Log())
		if err != nil {
			return false
		}
		defer f.Close()
		for m.at < size {
			n, err := f.ReadAt(m.block[:min(int64(len(m.block)), size-m.at)], m.at)
			m.at += int64(n)
			_, _ = m.cl.Write(m.block[:n])
			if m.lines() {
				return true
			}
			if err != nil || n == 0 {
				break
			}
		}
	}
	pending := m.cl.Pending()
	return !m.skip && m.re.Match(append(m.buf.Bytes(), pending[:min(len(pending), maxMatchLine)]...))
}

// blockSize is how much of the log a matcher reads at a time.
const blockSize = 64 << 10

// lines matches each whole line the cleaner has written, and keeps what
// is left of a line, up to maxMatchLine, for the next block.
func (m *matcher) lines() bool {
	b := m.buf.Bytes()
	for {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			break
		}
		line := b[:min(i, maxMatchLine)]
		b = b[i+1:]
		if !m.skip && m.re.Match(line) {
			m.buf.Reset()
			m.skip = false
			return true
		}
		m.skip = false
	}
	if len(b) >= maxMatchLine && !m.skip {
		matched := m.re.Match(b[:maxMatchLine])
		m.skip, b = true, nil
		if matched {
			m.buf.Reset()
			return true
		}
	}
	if m.skip {
		b = nil
	}
	rest := append([]byte(nil), b...)
	m.buf.Reset()
	m.buf.Write(rest)
	return false
}

// render cleans and cuts the log's bytes from..to, as shell does a
// command's output. With hold, an unfinished character or escape sequence
// at the end is left out, and held says how many bytes it is.
func render(j *Job, from, to int64, o LookOptions, hold bool) (text string, r cut.Result, held int64, err error) {
	if to <= from {
		return "", cut.Result{}, 0, nil
	}
	f, err := os.Open(j.Log())
	if err != nil {
		return "", cut.Result{}, 0, err
	}
	defer f.Close()
	c := cut.New(o.MaxOutput)
	cl := clean.New(c, o.Raw)
	if _, err := io.Copy(cl, io.NewSectionReader(f, from, to-from)); err != nil {
		return "", cut.Result{}, 0, err
	}
	if hold {
		held = int64(cl.Unfinished())
		_ = cl.Hold()
	} else {
		_ = cl.Flush()
	}
	r = c.Result()
	var b strings.Builder
	r.Finish(&b, func() string {
		if j.Status.LogFull {
			return fmt.Sprintf("the first %s of the job's output is in %s", cut.Size(MaxLog), j.Log())
		}
		return "the job's whole output is in " + j.Log()
	})
	return b.String(), r, held, nil
}

// endNotes are the lines that say how a job that ended was stopped, if it
// was, and what its log could not keep.
func (j *Job) endNotes() []string {
	var notes []string
	st := j.Status
	if st.Stopped != nil {
		notes = append(notes, st.Stopped.Note(proc.StopResult{Killed: st.Killed, Left: st.Left}, time.Duration(j.Spec.Grace), ""))
	}
	if st.LogFull {
		notes = append(notes, fmt.Sprintf("[the job wrote %s; its log kept the first %s]", cut.Size(st.OutputBytes), cut.Size(MaxLog)))
	}
	if st.Error != "" {
		notes = append(notes, "[the job could not start: "+st.Error+"]")
	}
	return notes
}
