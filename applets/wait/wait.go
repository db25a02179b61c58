// Package wait returns when files, a job or a port change, so that a model
// waits without polling: one call that ends as soon as its conditions
// hold, with what fired and why.
//
//	toolkit wait --changed 'build/**' [--timeout N] [--cursor N]
//	echo '{"any":[{"exists":"build/done"},{"job":"3f2a","ends":true}]}' | toolkit wait
//
// A condition is {"changed": GLOB} (a file under the tree matching GLOB
// was created, written, removed or renamed; grep's ignore rules),
// {"exists": PATH}, {"deleted": PATH}, {"stable": GLOB, "ms": 2000}
// (matching files exist and none was written for that long), {"job": ID,
// "ends": true} or {"job": ID, "until": RE}, {"port": 8080} (something
// listens on it). The directories are watched with inotify; changes within
// quiet_ms are one. The answer's cursor resumes where it left off:
// nothing missed, nothing twice.
package wait

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"toolkit/internal/cmdline"
	"toolkit/internal/cut"
	"toolkit/internal/jobs"
	"toolkit/internal/outcome"
	"toolkit/internal/proc"
	"toolkit/internal/root"
	"toolkit/internal/walk"
)

// Args is the input of one wait call.
type Args struct {
	Any         []Condition `json:"any,omitempty" desc:"Return as soon as one of these holds."`
	All         []Condition `json:"all,omitempty" desc:"Instead of any: return once all of these hold at once."`
	Path        *string     `json:"path,omitempty" flag:"--path DIR" check:"nonempty,nonul" desc:"The directory changed, stable, exists and deleted look in. Default: the working directory (the root with --root)."`
	TimeoutSecs *int        `json:"timeout_secs,omitempty" flag:"--timeout N" check:"min=1" desc:"Give up after this many seconds (default 60; at most the host's job lifetime, 1 hour): the answer then says nothing fired."`
	QuietMs     *int        `json:"quiet_ms,omitempty" flag:"--quiet-ms N" check:"min=0" desc:"Changes this close together are one: the answer comes once the files have been quiet this long (default 50)."`
	Cursor      *int        `json:"cursor,omitempty" flag:"--cursor N" check:"min=1" desc:"The cursor a wait's answer gave: changed counts what changed since then, so nothing is missed or seen twice."`
	Hidden      bool        `json:"hidden,omitempty" flag:"--hidden" desc:"Look at hidden files and directories too (names starting with a dot)."`
	NoIgnore    bool        `json:"no_ignore,omitempty" flag:"--no-ignore" desc:"Look at what .gitignore, .ignore and .git/info/exclude ignore too."`

	// Host holds the settings a host chooses, not the model.
	Host Options `json:"-"`
}

// Condition is one thing to wait for: exactly one of changed, exists,
// deleted, stable, job and port.
type Condition struct {
	Changed *string `json:"changed,omitempty" check:"nonempty,nonul" desc:"A glob (src/**/*.go): a file under path matching it was created, written, removed or renamed."`
	Exists  *string `json:"exists,omitempty" check:"nonempty,nonul" desc:"A path under path: it is there."`
	Deleted *string `json:"deleted,omitempty" check:"nonempty,nonul" desc:"A path under path: it is not there."`
	Stable  *string `json:"stable,omitempty" check:"nonempty,nonul" desc:"A glob: files matching it exist and none was written for ms (a build finished writing)."`
	Ms      *int    `json:"ms,omitempty" check:"min=1" desc:"With stable: how long nothing may have been written, in ms (default 2000)."`
	Job     *string `json:"job,omitempty" check:"nonempty" desc:"A job's id (shell's [still running as job ID]): with ends, it has ended; with until, its new output matched until."`
	Ends    bool    `json:"ends,omitempty" desc:"With job: the job has ended."`
	Until   *string `json:"until,omitempty" check:"nonempty" desc:"With job: a regular expression its output from now on matches, a line at a time."`
	Port    *int    `json:"port,omitempty" check:"min=1" desc:"A TCP port something listens on (read from /proc/net/tcp, no connection made)."`
	Host    *string `json:"host,omitempty" check:"nonempty" desc:"With port: the address it listens on (127.0.0.1, ::1, 0.0.0.0); default any."`
}

// Options are the host's settings.
type Options struct {
	Root        *root.Root
	JobLifetime time.Duration
}

// Details are the facts of a wait for --json.
type Details struct {
	Fired      bool                  `json:"fired"`
	WaitedMS   int64                 `json:"waited_ms"`
	Cursor     int64                 `json:"cursor"`
	Conditions []Held                `json:"conditions"`
	Changed    []outcome.ChangedFile `json:"changed,omitempty"`
	// Polled says why inotify could not serve, and the files were looked
	// at every second instead.
	Polled string `json:"polled,omitempty"`
	// CutShort names what cut the wait short: a signal, a cancelled call.
	CutShort string `json:"cut_short,omitempty"`
}

// Held is a condition as the wait left it.
type Held struct {
	Kind string `json:"kind"` // changed, exists, deleted, stable, job, port
	What string `json:"what"` // its glob, path, job or port
	Held bool   `json:"held"`
	Why  string `json:"why,omitempty"`
}

// DefaultTimeout and DefaultQuiet are a wait's when it gives none.
const (
	DefaultTimeout = 60 * time.Second
	DefaultQuiet   = 50 * time.Millisecond
	defaultStable  = 2 * time.Second
)

// Applet is wait's command line and in-process call.
var Applet = cmdline.Applet[Args]{
	Name:        "wait",
	Usage:       "return when files, a job or a port change: no polling",
	Synopsis:    "toolkit wait [flags] (--changed GLOB | --exists PATH | --deleted PATH | --stable GLOB | --job ID [--ends|--until RE] | --port N)...",
	Example:     `{"any":[{"changed":"build/**"},{"job":"3f2a","ends":true}],"timeout_secs":300}`,
	Description: Description,
	Details:     Details{},
	Hints:       cmdline.Hints{ReadOnly: true},
	Bare:        true, // flags alone, no argument: a person's
	Settings:    []cmdline.AnySetting{cmdline.JobLifetime},
	Flags: []cli.Flag{
		&cli.StringSliceFlag{Name: "changed", Usage: "wait for a change of a file matching `GLOB`"},
		&cli.StringSliceFlag{Name: "exists", Usage: "wait until `PATH` is there"},
		&cli.StringSliceFlag{Name: "deleted", Usage: "wait until `PATH` is not there"},
		&cli.StringSliceFlag{Name: "stable", Usage: "wait until files matching `GLOB` exist and none was written for 2 s"},
		&cli.StringFlag{Name: "job", Usage: "wait for job `ID`: its end (--ends), or its output (--until)"},
		&cli.BoolFlag{Name: "ends", Usage: "with --job: its end"},
		&cli.StringFlag{Name: "until", Usage: "with --job: a line of its output matching `RE`"},
		&cli.IntFlag{Name: "port", Usage: "wait until something listens on TCP `PORT`"},
	},
	Person: func(c *cli.Context, a *Args) error {
		for _, g := range c.StringSlice("changed") {
			a.Any = append(a.Any, Condition{Changed: &g})
		}
		for _, p := range c.StringSlice("exists") {
			a.Any = append(a.Any, Condition{Exists: &p})
		}
		for _, p := range c.StringSlice("deleted") {
			a.Any = append(a.Any, Condition{Deleted: &p})
		}
		for _, g := range c.StringSlice("stable") {
			a.Any = append(a.Any, Condition{Stable: &g})
		}
		if id := c.String("job"); id != "" {
			cond := Condition{Job: &id, Ends: c.Bool("ends")}
			if re := c.String("until"); re != "" {
				cond.Until = &re
			}
			a.Any = append(a.Any, cond)
		}
		if p := c.Int("port"); p > 0 {
			a.Any = append(a.Any, Condition{Port: &p})
		}
		return nil
	},
	Run: func(ctx context.Context, a *Args, h cmdline.Host) outcome.Outcome {
		a.Host.Root = h.Root
		if h.Settings != nil {
			a.Host.JobLifetime = cmdline.JobLifetime.Get(h.Settings)
		}
		return Run(ctx, *a)
	},
}

// cond is a condition, checked and ready to be looked at.
type cond struct {
	Held
	glob   string
	path   string // exists, deleted: under the tree
	stable time.Duration
	job    *jobs.Job
	ends   bool
	until  *jobs.Until
	port   int
	host   string
	// the changes that made a changed condition hold
	changed []outcome.ChangedFile
}

// Run carries out one wait.
func Run(ctx context.Context, a Args) outcome.Outcome {
	began := time.Now()
	conds, all, err := parse(a)
	if err != nil {
		return outcome.Misuse("input: %s", err)
	}
	life := a.Host.JobLifetime
	if life <= 0 {
		life = cmdline.DefaultJobLifetime
	}
	timeout := DefaultTimeout
	var notes []string
	if a.TimeoutSecs != nil {
		timeout = time.Duration(*a.TimeoutSecs) * time.Second
		if timeout > life {
			notes = append(notes, fmt.Sprintf("[timeout_secs %d is more than the host's job lifetime; waited at most %s]", *a.TimeoutSecs, cut.Seconds(life)))
			timeout = life
		}
	}
	quiet := DefaultQuiet
	if a.QuietMs != nil {
		quiet = time.Duration(*a.QuietMs) * time.Millisecond
	}
	name := "."
	if a.Path != nil {
		name = *a.Path
	}
	host, err := a.Host.Root.HostPath(name)
	if err == nil {
		host, err = filepath.Abs(host)
	}
	if fi, serr := os.Stat(host); err == nil && (serr != nil || !fi.IsDir()) {
		err = fmt.Errorf("%s: no such directory", name)
	}
	if err != nil {
		return outcome.Failure("%s", root.Reason(err))
	}
	t := newTree(host, walk.Options{Hidden: a.Hidden, NoIgnore: a.NoIgnore})
	files := false
	for _, c := range conds {
		files = files || c.glob != ""
	}
	d := Details{Conditions: []Held{}}
	var moved <-chan struct{}
	w, now, err := t.watch(ctx)
	if err != nil {
		d.Polled = err.Error()
		notes = append(notes, "[the files are looked at every second: "+err.Error()+"]")
		now = nil
	} else {
		defer w.Close()
		go w.Run()
		moved = w.Moved()
	}
	// What the changes are counted from: the cursor's files, else the
	// tree as it is now.
	var base snapshot
	if a.Cursor != nil {
		if base, err = loadCursor(int64(*a.Cursor), t); err != nil {
			notes = append(notes, fmt.Sprintf("[cursor %d: %s; changes are counted from now]", *a.Cursor, err))
		}
	}
	if now == nil {
		if now, err = t.snapshot(ctx); err != nil {
			return outcome.Failure("%s: %s", name, root.Reason(err))
		}
	}
	if base == nil {
		base = now
	}
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	ticks := tick.C
	if d.Polled == "" && !needsTicks(conds) {
		ticks = nil // nothing to look at but on a change
	}
	fired := false
	for {
		at := t.look(conds, base, now)
		if fired = holds(conds, all); fired {
			break
		}
		var next <-chan time.Time // a stable condition's moment
		if at.After(time.Now()) {
			next = time.After(time.Until(at))
		}
		stop := false
		select {
		case <-moved:
			now = t.settle(ctx, moved, quiet)
		case <-ticks:
			if d.Polled != "" && files {
				now, _ = t.snapshot(ctx)
			}
		case <-next:
			now, _ = t.snapshot(ctx)
		case <-deadline.C:
			stop = true
		case <-ctx.Done():
			stop = true
		}
		if stop {
			t.look(conds, base, now)
			fired = holds(conds, all)
			break
		}
	}
	d.Fired = fired
	d.WaitedMS = time.Since(began).Milliseconds()
	for _, c := range conds {
		d.Conditions = append(d.Conditions, c.Held)
		d.Changed = append(d.Changed, c.changed...)
	}
	if cause := proc.CauseOf(context.Cause(ctx)); ctx.Err() != nil && cause != nil {
		d.CutShort = cause.Name()
		notes = append(notes, "["+cause.What()+"]")
	}
	d.Cursor, err = saveCursor(t, now)
	if err != nil {
		notes = append(notes, "[no cursor: "+err.Error()+"]")
	}
	return outcome.Success(answer(d, conds, all, notes), d)
}

// needsTicks says a condition must be looked at every second: a job's, a
// port's, a path outside what inotify sees.
func needsTicks(conds []*cond) bool {
	for _, c := range conds {
		if c.job != nil || c.port > 0 || c.path != "" {
			return true
		}
	}
	return false
}

// holds says the conditions hold: one of them, or all.
func holds(conds []*cond, all bool) bool {
	n := 0
	for _, c := range conds {
		if c.Held.Held {
			n++
		}
	}
	return all && n == len(conds) || !all && n > 0
}

// parse checks the conditions.
func parse(a Args) ([]*cond, bool, error) {
	list, all := a.Any, false
	switch {
	case len(a.Any) > 0 && len(a.All) > 0:
		return nil, false, errors.New("give any or all, not both")
	case len(a.All) > 0:
		list, all = a.All, true
	case len(a.Any) == 0:
		return nil, false, errors.New("give the conditions to wait for: any (one of them) or all")
	}
	var out []*cond
	for i, c := range list {
		k := &cond{}
		n := 0
		set := func(kind, what string) { n++; k.Kind, k.What = kind, what }
		if c.Changed != nil {
			set("changed", *c.Changed)
			k.glob = *c.Changed
		}
		if c.Stable != nil {
			set("stable", *c.Stable)
			k.glob, k.stable = *c.Stable, defaultStable
			if c.Ms != nil {
				k.stable = time.Duration(*c.Ms) * time.Millisecond
			}
		}
		if c.Exists != nil {
			set("exists", *c.Exists)
			k.path = *c.Exists
		}
		if c.Deleted != nil {
			set("deleted", *c.Deleted)
			k.path = *c.Deleted
		}
		if c.Job != nil {
			set("job", *c.Job)
			j, err := jobs.Open(*c.Job)
			if err != nil {
				return nil, false, fmt.Errorf("condition %d: job %s: %s", i, *c.Job, err)
			}
			k.job, k.ends = j, c.Ends
			if c.Until != nil {
				re, err := regexp.Compile(*c.Until)
				if err != nil {
					return nil, false, fmt.Errorf("condition %d: until is not a regular expression: %s", i, strings.TrimPrefix(err.Error(), "error parsing regexp: "))
				}
				k.until = jobs.NewUntil(j, re, jobs.LogSize(j), false)
			}
			if !c.Ends && c.Until == nil {
				return nil, false, fmt.Errorf("condition %d: job needs ends or until", i)
			}
		}
		if c.Port != nil {
			set("port", fmt.Sprint(*c.Port))
			if *c.Port > 65535 {
				return nil, false, fmt.Errorf("condition %d: port %d is not a TCP port", i, *c.Port)
			}
			k.port = *c.Port
			if c.Host != nil {
				k.host = *c.Host
			}
		}
		switch {
		case n != 1:
			return nil, false, fmt.Errorf("condition %d: give one of changed, exists, deleted, stable, job and port", i)
		case c.Ms != nil && c.Stable == nil, (c.Ends || c.Until != nil) && c.Job == nil, c.Host != nil && c.Port == nil:
			return nil, false, fmt.Errorf("condition %d: ms goes with stable, ends and until with job, host with port", i)
		}
		if k.glob != "" {
			if err := walk.CheckGlob(k.glob); err != nil {
				return nil, false, fmt.Errorf("condition %d: %s: %q", i, err, k.glob)
			}
		}
		out = append(out, k)
	}
	return out, all, nil
}

// Description tells a model when to use wait and what it returns.
const Description = `Wait for something to happen in the sandbox, without polling: use it instead of sleep loops (until [ -f done ]; do sleep 5; done) and of calling read or job again and again. It returns as soon as its conditions hold, with what fired and why.

A condition is one of: {"changed": GLOB} a file matching the glob (under path) was created, written, removed or renamed; {"exists": PATH} or {"deleted": PATH}; {"stable": GLOB, "ms": 2000} matching files exist and none was written for that long (a build finished writing); {"job": ID, "ends": true} the job ended, or {"job": ID, "until": RE} its output matched; {"port": 8080} something listens on the port (a server is up). any returns when one holds, all when every one does. Files that .gitignore ignores, and hidden ones, are left out unless asked (as grep's).

Returns a line such as [waited 3.2 s: changed — M build/out.js, A build/done · cursor 41]; on timeout_secs (default 60) [waited 60 s: nothing fired · cursor 41], not an error. Pass the cursor to the next wait to see only what changed after this one: nothing is missed or seen twice.`
