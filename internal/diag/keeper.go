package diag

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"toolkit/internal/diff"
	"toolkit/internal/keep"
	"toolkit/internal/lsp"
	"toolkit/internal/outcome"
	"toolkit/internal/proc"
	"toolkit/internal/state"
)

// KeeperName is the hidden command of a kept language server: toolkit
// lsp-keeper SPEC.
//
// A language server is kept by a toolkit of its own, one for each state
// directory, server and project root, started by the first call that
// needs it (internal/keep, as a tree's history keeper is): it starts the
// server, initializes it, and answers the calls' checks on an abstract
// socket, one at a time, holding the documents it was given open between
// them. It ends after its lifetime without a check, when its owner (a
// toolkit mcp) ends, at SIGTERM (toolkit job --stop-all), or when its
// server does.
const KeeperName = "lsp-keeper"

// kept is what a keeper is started with.
type kept struct {
	Name   string        `json:"name"`
	Argv   []string      `json:"argv"`
	Root   string        `json:"root"`
	Settle time.Duration `json:"settle,omitempty"`
	Idle   time.Duration `json:"idle"`
	Owner  string        `json:"owner,omitempty"`
	// Options are the server's initializationOptions.
	Options map[string]any `json:"options,omitempty"`
	// MemoryMB, where more than 0, is the most the server's processes may
	// hold resident.
	MemoryMB int    `json:"memory_mb,omitempty"`
	ident    string // id, once found
}

// id names a kept server: one for each server, command and root.
func (k kept) id() string {
	options, _ := json.Marshal(k.Options)
	sum := sha256.Sum256([]byte(k.Name + "\x00" + strings.Join(k.Argv, "\x00") + "\x00" + k.Root + "\x00" + string(options)))
	return hex.EncodeToString(sum[:12])
}

// keptDir is the state directory's folder of kept servers.
func keptDir() (string, error) {
	st, err := state.Dir("diagnostics")
	if err != nil {
		return "", err
	}
	dir := filepath.Join(st, "diagnostics")
	return dir, os.MkdirAll(dir, 0o700)
}

// socketOf is the abstract socket a kept server's keeper listens on.
func socketOf(dir, id string) string {
	sum := sha256.Sum256([]byte(dir + "\x00" + id))
	return "@toolkit-lsp-" + hex.EncodeToString(sum[:12])
}

// request is a call's check, as it asks a keeper.
type request struct {
	Files []requestFile `json:"files"`
	// Wait is how long the keeper has to answer.
	Wait time.Duration `json:"wait"`
	// Created, Changed and Deleted are the other files the call changed:
	// the server is told of them (didChangeWatchedFiles).
	Created, Changed, Deleted []string
	// Fixes asks for the quick fixes of the first MaxFixes diagnostics,
	// as diffs whose paths are from Dir.
	Fixes bool   `json:"fixes,omitempty"`
	Dir   string `json:"dir,omitempty"`
}

// MaxFixes is how many diagnostics' quick fixes a check asks for.
const MaxFixes = 20

type requestFile struct {
	Path     string  `json:"path"`
	Rel      string  `json:"rel"`
	Language string  `json:"language"`
	Before   *string `json:"before,omitempty"` // checked first, where given
	After    string  `json:"after"`
}

// response is a keeper's answer.
type response struct {
	Files     []responseFile       `json:"files"`
	Elsewhere []outcome.Diagnostic `json:"elsewhere,omitempty"` // paths absolute
}

type responseFile struct {
	Before    []outcome.Diagnostic `json:"before,omitempty"`
	BeforeErr string               `json:"before_err,omitempty"`
	After     []outcome.Diagnostic `json:"after"`
	Err       string               `json:"err,omitempty"`
}

// RunKeeper is a kept language server's keeper: it returns its exit
// status.
func RunKeeper(arg string) int {
	var k kept
	if err := json.Unmarshal([]byte(arg), &k); err != nil || len(k.Argv) == 0 {
		return 2
	}
	dir, err := keptDir()
	if err != nil {
		return 1
	}
	id := k.id()
	lock := keep.Hold(filepath.Join(dir, id+".keeper"))
	if lock == nil {
		return 0 // one lives
	}
	defer lock.Close()
	say := func(state string) { lock.Say(state, k.Name+" "+k.Root) }
	say("starting")
	// Under memory pressure, the kernel takes a server before the calls'
	// commands, and before toolkit.
	_ = os.WriteFile("/proc/self/oom_score_adj", []byte("500"), 0)
	failed := filepath.Join(dir, id+".failed")
	ln, err := net.Listen("unix", socketOf(dir, id))
	if err != nil {
		return 0 // another keeper listens
	}
	defer ln.Close()
	srv, err := lsp.Start(k.Name, k.Argv, k.Root, nil, k.Options)
	if err != nil {
		_ = os.WriteFile(failed, []byte(err.Error()+"\n"), 0o600)
		return 1
	}
	_ = os.Remove(failed)
	srv.Settle = k.Settle
	say(fmt.Sprintf("loading, server %d", srv.Pid()))
	ready := srv.Ready()

	asked := make(chan struct{}, 1)
	var one sync.Mutex // held by a check, to the end of its answer
	go serve(ln, srv, &one, asked)

	stop := make(chan os.Signal, 1)
	defer proc.Listen(stop)()
	idle := time.NewTimer(k.Idle)
	var owned, fence <-chan time.Time
	if k.Owner != "" {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		owned = t.C
	}
	if k.MemoryMB > 0 {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		fence = t.C
	}
	for {
		select {
		case <-asked:
			idle.Reset(k.Idle)
			continue
		case <-ready:
			ready = nil
			if srv.Failed() {
				// Said to the call that asked; not started again for a
				// while.
				_ = os.WriteFile(failed, []byte(srv.Why()+"\n"), 0o600)
				ln.Close()
				one.Lock()
				srv.Close(2 * time.Second)
				return 1
			}
			say(fmt.Sprintf("ready, server %d", srv.Pid()))
			continue
		case <-owned:
			if !keep.OwnerGone(k.Owner) {
				continue
			}
		case <-fence:
			held := resident(srv.Pid())
			if held <= int64(k.MemoryMB)<<20 {
				continue
			}
			// Said to the calls until it is started again.
			_ = os.WriteFile(failed, fmt.Appendf(nil, "it held %d MiB, more than --limit-memory %d MiB\n", held>>20, k.MemoryMB), 0o600)
		case <-srv.Gone():
			_ = os.WriteFile(failed, []byte(srv.Why()+"\n"), 0o600)
			// The check under way says so in its answer before the end.
			ln.Close()
			one.Lock()
			return 1
		case <-idle.C:
		case <-stop:
		}
		// Gone from the list and the socket at once: a call from now on
		// starts another keeper, not this one that is ending.
		ln.Close()
		lock.Close()
		srv.Close(2 * time.Second)
		return 0
	}
}

// serve answers the calls' checks, one at a time: only from this user.
func serve(ln net.Listener, srv *lsp.Server, one *sync.Mutex, asked chan<- struct{}) {
	// The first check is the server's first look at the project: what it
	// publishes for other files then was there before the call, not
	// brought by it, and is not said.
	first := true
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			if !keep.SameUser(c) {
				return
			}
			var req request
			if json.NewDecoder(bufio.NewReader(c)).Decode(&req) != nil {
				return
			}
			select {
			case asked <- struct{}{}:
			default:
			}
			ctx, cancel := context.WithTimeout(context.Background(), req.Wait)
			defer cancel()
			one.Lock()
			defer one.Unlock()
			res := answer(ctx, srv, req)
			if first {
				res.Elsewhere, first = nil, false
			}
			_ = json.NewEncoder(c).Encode(res)
		}()
	}
}

// answer checks a call's files: each one's text before the call, where
// given, then its text after; and says what the server published meanwhile
// for files the call did not change, not published before.
func answer(ctx context.Context, srv *lsp.Server, req request) response {
	fixed := 0
	asked := map[string]bool{}
	for _, f := range req.Files {
		asked[f.Path] = true
	}
	srv.CloseStale(ctx, func(path, text string) bool {
		if asked[path] {
			return false
		}
		b, err := os.ReadFile(path)
		return err != nil || string(b) != text
	})
	_ = srv.Changed(ctx, req.Created, req.Changed, req.Deleted)
	before := srv.Published()
	res := response{Files: make([]responseFile, len(req.Files))}
	for i, f := range req.Files {
		rf := &res.Files[i]
		if f.Before != nil {
			r, err := srv.Diagnose(ctx, f.Path, f.Language, *f.Before)
			if err != nil {
				rf.BeforeErr = describe(srv, err)
			} else {
				rf.Before = convert(f.Rel, *f.Before, r.Diagnostics, r.UTF16)
			}
		}
		r, err := srv.Diagnose(ctx, f.Path, f.Language, f.After)
		if err != nil {
			rf.Err = describe(srv, err)
			continue
		}
		rf.After = convert(f.Rel, f.After, r.Diagnostics, r.UTF16)
		if req.Fixes {
			fixes(ctx, srv, req.Dir, f, r, rf.After, &fixed)
		}
	}
	srv.Quiet(ctx, 30*time.Millisecond, 250*time.Millisecond)
	for uri, p := range srv.Published() {
		if b, had := before[uri]; had && b.Seq == p.Seq {
			continue // not published again since: nothing new
		}
		path := lsp.PathOf(uri)
		if path == "" || asked[path] {
			continue
		}
		old := map[string]int{}
		for _, d := range before[uri].Diagnostics {
			old[identity(d)]++
		}
		var fresh []lsp.Diagnostic
		for _, d := range p.Diagnostics {
			if k := identity(d); old[k] > 0 {
				old[k]--
				continue
			}
			fresh = append(fresh, d)
		}
		if len(fresh) > 0 {
			text, _ := os.ReadFile(path)
			res.Elsewhere = append(res.Elsewhere, convert(path, string(text), fresh, srv.UTF16())...)
		}
	}
	return res
}

// fixes puts the server's first quick fix of each diagnostic of f into
// ds (r's, converted), as a diff, while fewer than MaxFixes have been
// asked for.
func fixes(ctx context.Context, srv *lsp.Server, dir string, f requestFile, r lsp.Result, ds []outcome.Diagnostic, asked *int) {
	for i, d := range r.Diagnostics {
		if *asked >= MaxFixes || ctx.Err() != nil {
			return
		}
		*asked++
		fs, err := srv.Fixes(ctx, f.Path, d)
		if err != nil || len(fs) == 0 {
			continue
		}
		if diff := fixDiff(dir, f, fs[0], r.UTF16); diff != "" {
			ds[i].Fix = &outcome.Fix{Title: fs[0].Title, Diff: diff}
		}
	}
}

// fixDiff is a fix as a unified diff of the files it edits, named from
// dir: f's text as the server holds it, another file's from disk.
func fixDiff(dir string, f requestFile, fix lsp.Fix, utf16 bool) string {
	paths := make([]string, 0, len(fix.Edits))
	for p := range fix.Edits {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	var b strings.Builder
	for _, p := range paths {
		old := f.After
		if p != f.Path {
			content, err := os.ReadFile(p)
			if err != nil {
				return ""
			}
			old = string(content)
		}
		changed, ok := lsp.Apply(old, fix.Edits[p], utf16)
		if !ok {
			return ""
		}
		b.WriteString(diff.Unified(relTo(dir, p), []byte(old), []byte(changed)))
	}
	return b.String()
}

// identity tells a server's diagnostics apart, in a file no call changed.
func identity(d lsp.Diagnostic) string {
	b, _ := json.Marshal(d)
	return string(b)
}

// describe says why a server gave no answer.
func describe(srv *lsp.Server, err error) string {
	switch {
	case errors.Is(err, lsp.ErrLoading):
		return "loading"
	case errors.Is(err, lsp.ErrGone):
		return "ended: " + srv.Why()
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	}
	return err.Error()
}

// convert is a server's diagnostics of text as toolkit says them: lines
// and columns from 1, columns in bytes.
func convert(rel, text string, ds []lsp.Diagnostic, utf16 bool) []outcome.Diagnostic {
	lines := strings.Split(text, "\n")
	col := func(p lsp.Position) int {
		if p.Line < 0 || p.Line >= len(lines) {
			return p.Character + 1
		}
		return lsp.ByteColumn(lines[p.Line], p.Character, utf16) + 1
	}
	out := make([]outcome.Diagnostic, 0, len(ds))
	for _, d := range ds {
		out = append(out, outcome.Diagnostic{Path: rel, Line: d.Range.Start.Line + 1, Col: col(d.Range.Start), EndLine: d.Range.End.Line + 1, EndCol: col(d.Range.End),
			Severity: severityName(d.Severity), Message: d.Message, Code: d.CodeString(), Source: d.Source})
	}
	return out
}

func severityName(n int) string {
	switch n {
	case 2:
		return Warning
	case 3:
		return "info"
	case 4:
		return "hint"
	}
	return Error
}

// askKeeper sends a check to the keeper of k, starting the keeper where none
// lives, and returns its answer, or why there is none by ctx's end.
func askKeeper(ctx context.Context, k kept, req request) (response, error) {
	dir, err := keptDir()
	if err != nil {
		return response{}, err
	}
	id := k.id()
	if b, err := os.ReadFile(filepath.Join(dir, id+".failed")); err == nil {
		if fi, err := os.Stat(filepath.Join(dir, id+".failed")); err == nil && time.Since(fi.ModTime()) < time.Minute {
			return response{}, fmt.Errorf("stopped working less than a minute ago (%s); it is started again after that", strings.TrimSpace(string(b)))
		}
	}
	c, err := dial(ctx, dir, id, k)
	if err != nil {
		return response{}, err
	}
	defer c.Close()
	deadline, _ := ctx.Deadline()
	_ = c.SetDeadline(deadline)
	// The keeper answers a moment before the call's deadline, so that
	// what it found gets here by it.
	req.Wait = max(time.Until(deadline)-50*time.Millisecond, time.Millisecond)
	if err := json.NewEncoder(c).Encode(req); err != nil {
		return response{}, err
	}
	var res response
	if err := json.NewDecoder(c).Decode(&res); err != nil {
		if ctx.Err() != nil || errors.Is(err, os.ErrDeadlineExceeded) {
			// Its answer did not come by the deadline: a server not
			// ready yet is still loading, whatever the keeper was doing.
			if b, _ := os.ReadFile(filepath.Join(dir, id+".keeper")); !strings.Contains(string(b), " ready, ") {
				return response{}, errors.New("loading")
			}
			return response{}, errNoAnswer
		}
		return response{}, err
	}
	return res, nil
}

var errNoAnswer = errors.New("timeout")

// dial connects to the keeper of k, starting it where none listens.
func dial(ctx context.Context, dir, id string, k kept) (net.Conn, error) {
	var d net.Dialer
	sock := socketOf(dir, id)
	if c, err := d.DialContext(ctx, "unix", sock); err == nil {
		return c, nil
	}
	b, _ := json.Marshal(k)
	if err := keep.Start(filepath.Join(dir, id+".keeper"), KeeperName, string(b)); err != nil {
		return nil, err
	}
	for {
		if c, err := d.DialContext(ctx, "unix", sock); err == nil {
			return c, nil
		}
		select {
		case <-ctx.Done():
			return nil, errors.New("loading")
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// resident is what the process pid and its descendants hold resident, in
// bytes: a server's (typescript-language-server runs tsserver).
func resident(pid int) int64 {
	procs, err := proc.Snapshot()
	if err != nil {
		return 0
	}
	pages := procs[pid].RSS
	for _, p := range proc.Descendants(procs, pid) {
		pages += procs[p].RSS
	}
	return pages * int64(os.Getpagesize())
}

// Server is a kept language server as toolkit job lists it.
type Server struct {
	Name  string `json:"name"`
	Root  string `json:"root"`
	Pid   int    `json:"pid"`
	State string `json:"state"`
	// RSS is its server's resident memory, in bytes.
	RSS int64 `json:"rss_bytes"`
	h   keep.Helper
}

// Kept are the language servers kept for the state directory.
func Kept() []Server {
	dir, err := keptDir()
	if err != nil {
		return nil
	}
	var out []Server
	for _, h := range keep.List(filepath.Join(dir, "*.keeper")) {
		name, root, _ := strings.Cut(h.What, " ")
		s := Server{Name: name, Root: root, Pid: h.Pid, State: h.State, h: h}
		if _, server, ok := strings.Cut(h.State, ", server "); ok {
			if pid, _ := strconv.Atoi(server); pid > 0 {
				s.RSS = resident(pid)
			}
		}
		out = append(out, s)
	}
	return out
}

// Stop ends the kept server's keeper, and with it its server.
func (s Server) Stop() { s.h.Stop() }
