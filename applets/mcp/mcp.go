// Package mcp serves toolkit's tools over the Model Context Protocol, on
// stdin and stdout, with the official Go SDK:
//
//	toolkit mcp [--root DIR]
//	docker exec -i BOX toolkit mcp
//
// tools/list gives the tools with their schemas and hints; tools/call runs
// exactly the applet's code and returns the Outcome's text as content,
// isError for tool and usage errors, and the Outcome's --json object as
// structured content. Calls run at once and in parallel. A tool that starts
// processes (shell) runs each call as a child toolkit, so that a call that
// crashes or leaks cannot take the server with it; the others run in the
// server, and a call that panics is that call's tool error.
//
// A cancelled call (notifications/cancelled) stops the child, which stops
// the command's whole tree as a timeout does. When stdin ends, the calls in
// flight run to their own end (each is bounded by its timeout), are
// answered, and the server exits. SIGTERM, SIGINT or SIGHUP stop the calls
// still running, which are answered while stdout is still open, and the
// server exits; a second signal kills what is left at once. Nothing but
// protocol messages goes to stdout.
package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/urfave/cli/v2"
	"golang.org/x/sys/unix"

	"toolkit/applets"
	"toolkit/internal/cmdline"
	"toolkit/internal/history/track"
	"toolkit/internal/input"
	"toolkit/internal/jobs"
	"toolkit/internal/keep"
	"toolkit/internal/outcome"
	"toolkit/internal/proc"
	"toolkit/internal/root"
	"toolkit/internal/sysinfo"
)

// Usage is mcp's usage line.
const Usage = "toolkit mcp [--root DIR]"

// maxMessage bounds one JSON-RPC message: the 64 MiB of input toolkit
// takes, and room for the envelope around it.
const maxMessage = input.MaxSize + 1<<20

// Command is the mcp subcommand.
func Command(version string) *cli.Command {
	return &cli.Command{
		Name:         "mcp",
		Usage:        "serve the tools over the Model Context Protocol on stdin and stdout",
		UsageText:    Usage,
		Description:  cmdline.EnvHelp,
		Flags:        flags(),
		OnUsageError: cmdline.UsageError(Usage),
		Action: func(c *cli.Context) error {
			r, err := cmdline.OpenRoot(c)
			if err != nil {
				return cmdline.Misuse(c, err, Usage)
			}
			defer r.Close()
			if err := cmdline.CheckConfine(c, r); err != nil {
				return cmdline.Misuse(c, err, Usage)
			}
			exe, err := os.Executable()
			if err != nil {
				return cmdline.Exit(c, outcome.Failure("cannot find toolkit's own binary: %s", err), outcome.TextMode)
			}
			// The history keepers its calls start, as child toolkits or
			// here, end with this server.
			os.Setenv(keep.OwnerEnv, keep.Owner())
			s := New(version, Config{Root: r, Settings: c, Exe: exe, KeepJobs: c.Bool("keep-jobs")})
			sigs := make(chan os.Signal, 4)
			defer proc.Listen(sigs)()
			proc.Caught() // a host that closes its end is an error to the server, not its end
			if err := s.Serve(os.Stdin, os.Stdout, sigs); err != nil {
				return cmdline.Exit(c, outcome.Failure("%s", err), outcome.TextMode)
			}
			return nil
		},
	}
}

// flags are --root and every tool's host settings, with toolkit mcp's
// defaults.
func flags() []cli.Flag {
	keep := &cli.BoolFlag{Name: "keep-jobs", EnvVars: []string{"TOOLKIT_KEEP_JOBS"}, Usage: "leave the jobs the session started running when it ends (default: stop them)"}
	return append([]cli.Flag{cmdline.RootFlag("confine every call's paths to `DIR`"), keep}, applets.ModelFlags()...)
}

// Config is what every call of a server shares.
type Config struct {
	Root     *root.Root
	Settings cmdline.Settings
	// Exe is the toolkit binary that child calls run, as "toolkit TOOL".
	Exe string
	// KeepJobs leaves the jobs the session started running when it ends.
	KeepJobs bool
	// ProgressEvery is how often a call that has a progress token is
	// said to go on; default a second.
	ProgressEvery time.Duration
}

// Server is toolkit's MCP server.
type Server struct {
	sdk  *sdk.Server
	conf Config

	stopCtx context.Context         // cancelled when the server stops its calls
	stop    context.CancelCauseFunc // stops every call still running
	again   chan struct{}           // closed when what is left is to be killed at once
	once    sync.Once
	calls   sync.WaitGroup

	mu   sync.Mutex
	jobs []string // the jobs the session's calls started
}

// errEOF ends the calls of a session whose stdin ended, once every one of
// them has been answered: none is left to stop then.
var errEOF = errors.New("the end of stdin")

// New returns a server for the tools, every call confined as conf says.
func New(version string, conf Config) *Server {
	s := &Server{conf: conf, again: make(chan struct{})}
	s.stopCtx, s.stop = context.WithCancelCause(context.Background())
	s.sdk = sdk.NewServer(&sdk.Implementation{Name: "toolkit", Version: version}, &sdk.ServerOptions{
		Logger: slog.New(quietEOF{slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})}),
	})
	for _, t := range applets.All() {
		if t.History && track.Off(conf.Settings) {
			continue // nothing to show or take back
		}
		s.sdk.AddTool(&sdk.Tool{
			Name:         t.Name,
			Description:  t.DescriptionFor(conf.Settings),
			InputSchema:  input.Schema(t.Args),
			OutputSchema: outcome.Schema(t.Details),
			Annotations: &sdk.ToolAnnotations{
				ReadOnlyHint:    t.Hints.ReadOnly,
				IdempotentHint:  t.Hints.Idempotent,
				DestructiveHint: &t.Hints.Destructive,
				OpenWorldHint:   &t.Hints.OpenWorld,
			},
		}, s.handler(t))
	}
	// The sandbox's facts, read when asked: toolkit info's.
	s.sdk.AddResource(&sdk.Resource{URI: InfoURI, Name: "info", Title: "The sandbox: CPUs, memory, disk, Landlock, terminals, limits", MIMEType: "application/json"},
		func(context.Context, *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			dir := "" // the working directory
			if conf.Root != nil {
				dir = conf.Root.Dir()
			}
			var limits map[string]string
			if conf.Settings != nil {
				limits = sysinfo.Limits(conf.Settings, applets.ModelFlags())
			}
			b, err := json.Marshal(sysinfo.Gather(dir, limits))
			if err != nil {
				return nil, err
			}
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: InfoURI, MIMEType: "application/json", Text: string(b)}}}, nil
		})
	return s
}

// InfoURI names the resource of the sandbox's facts.
const InfoURI = "toolkit://info"

// Serve serves one session on in and out until in ends or a signal comes,
// as the package comment says.
func (s *Server) Serve(in io.ReadCloser, out io.Writer, sigs <-chan os.Signal) error {
	w := newWriter(out)
	f := newFilter(in, w, maxMessage)
	done := make(chan error, 1)
	go func() { done <- s.sdk.Run(context.Background(), &sdk.IOTransport{Reader: f, Writer: w}) }()

	for {
		select {
		case err := <-done:
			s.stop(errEOF)
			s.calls.Wait()
			if !s.conf.KeepJobs {
				s.stopJobs()
			}
			if err != nil && !endOfInput(err) && w.broken() == nil {
				return err
			}
			return nil
		case sig := <-sigs:
			if s.stopCtx.Err() != nil {
				s.once.Do(func() { close(s.again) })
				continue
			}
			s.stop(cmdline.Signalled(signalName(sig)))
			// The client that sent it kills the server 2 s later (the SDKs'
			// stdio clients do): whatever --grace is, what still runs a
			// second from now is killed at once, as by a second signal.
			time.AfterFunc(signalWindow, func() { s.once.Do(func() { close(s.again) }) })
			go func() {
				// Answered, the calls are over: so is the session.
				s.calls.Wait()
				<-w.allAnswered()
				f.end()
			}()
		}
	}
}

// signalWindow is how long the calls of a server stopped by a signal are
// given to stop of themselves before what is left is killed at once: the
// server then answers and ends well inside the 2 s the SDKs' clients wait
// before their SIGKILL.
const signalWindow = time.Second

func signalName(sig os.Signal) string {
	if s, ok := sig.(syscall.Signal); ok {
		return unix.SignalName(s)
	}
	return sig.String()
}

// stopSignal is the signal that stops a child for why its call ends: the
// one the server received, SIGTERM for a cancelled call.
func stopSignal(why error) syscall.Signal {
	if c := proc.CauseOf(why); c != nil && c.Kind == proc.Signalled {
		if s := unix.SignalNum(c.By); s != 0 {
			return s
		}
	}
	return syscall.SIGTERM
}

// quietEOF drops the SDK's report that the client went away: the end of
// stdin is how a session ends.
type quietEOF struct{ slog.Handler }

func (q quietEOF) Handle(ctx context.Context, r slog.Record) error {
	eof := false
	r.Attrs(func(a slog.Attr) bool {
		if err, ok := a.Value.Any().(error); ok && endOfInput(err) {
			eof = true
		}
		return !eof
	})
	if eof {
		return nil
	}
	return q.Handler.Handle(ctx, r)
}

// endOfInput reports whether err is the session ending because its input
// did: io.EOF, or the SDK's "server is closing" made of it.
func endOfInput(err error) bool {
	return errors.Is(err, io.EOF) || strings.HasSuffix(err.Error(), ": EOF")
}

func (s *Server) handler(t applets.Tool) sdk.ToolHandler {
	return func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		if tok := req.Params.GetProgressToken(); tok != nil && req.Session != nil {
			defer s.progress(ctx, req.Session, tok)()
		}
		return s.call(ctx, t, req.Params.Arguments), nil
	}
}

// progress tells the client, every ProgressEvery, that a call with a
// progress token still runs, until the returned function is called: a
// client that resets its timeout on progress keeps waiting for a long
// build or a job's wait_secs.
func (s *Server) progress(ctx context.Context, ss *sdk.ServerSession, token any) (stop func()) {
	every := s.conf.ProgressEvery
	if every <= 0 {
		every = time.Second
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(every)
		defer tick.Stop()
		start := time.Now()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-tick.C:
				secs := time.Since(start).Seconds()
				_ = ss.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: token, Progress: secs, Message: fmt.Sprintf("running for %.0f s", secs)})
			}
		}
	})
	// Waited for, so that no notification follows the call's response.
	return func() { close(done); wg.Wait() }
}

// noteJob remembers a job a call started, to stop it when the session ends.
func (s *Server) noteJob(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.jobs = append(s.jobs, id)
}

// stopJobs stops the jobs the session's calls started, all at once.
func (s *Server) stopJobs() {
	s.mu.Lock()
	ids := s.jobs
	s.jobs = nil
	s.mu.Unlock()
	var wg sync.WaitGroup
	for _, id := range ids {
		wg.Go(func() {
			if j, err := jobs.Open(id); err == nil && j.Running() {
				_ = j.Stop(&proc.Cause{Kind: proc.Asked, By: "the MCP session that started it ended"})
			}
		})
	}
	wg.Wait()
}

// call runs one tools/call of t with the arguments args.
func (s *Server) call(ctx context.Context, t applets.Tool, args []byte) *sdk.CallToolResult {
	s.calls.Add(1)
	defer s.calls.Done()
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	defer context.AfterFunc(s.stopCtx, func() { cancel(context.Cause(s.stopCtx)) })()
	if a := bytes.TrimSpace(args); len(a) == 0 || string(a) == "null" {
		args = []byte("{}") // no arguments: every field left out
	}
	if t.Child {
		return s.child(ctx, t, args)
	}
	return result(s.here(ctx, t, args))
}

// here runs a call in the server. A panic is that call's tool error.
func (s *Server) here(ctx context.Context, t applets.Tool, args []byte) (o outcome.Outcome) {
	defer func() {
		if p := recover(); p != nil {
			o = outcome.Failure("toolkit failed inside this call (%v); nothing else was affected", p)
		}
	}()
	return t.Call(ctx, args, cmdline.Host{Root: s.conf.Root, Settings: s.conf.Settings, Details: true})
}

// child runs a call as a child toolkit: toolkit TOOL --json, the call's
// input on its stdin. Cancelling ctx sends it SIGTERM, which stops what it
// runs and has it answer; a second stop of the server sends another, which
// kills at once.
func (s *Server) child(ctx context.Context, t applets.Tool, args []byte) *sdk.CallToolResult {
	argv := []string{"toolkit", t.Name, "--json"}
	if s.conf.Root != nil {
		argv = append(argv, "--root", s.conf.Root.Dir())
	}
	// The child takes the server's settings, its defaults included: they
	// are toolkit mcp's, not the command line's.
	for _, st := range t.Settings {
		if s.conf.Settings == nil {
			break
		}
		argv = append(argv, fmt.Sprintf("--%s=%v", st.Key(), s.conf.Settings.Value(st.Key())))
	}
	var stdout, stderr bytes.Buffer
	// Should the server die, the child stops what it runs, as on a signal.
	p, err := proc.StartChild(proc.Child{Path: s.conf.Exe, Args: argv, Stdin: bytes.NewReader(args), Stdout: &stdout, Stderr: &stderr, DeathSignal: syscall.SIGTERM})
	if err != nil {
		return result(outcome.Failure("cannot start toolkit %s: %s", t.Name, root.Reason(err)))
	}
	go func() {
		select {
		case <-ctx.Done():
		case <-p.Done():
			return
		}
		sig := stopSignal(context.Cause(ctx))
		p.Signal(sig)
		select {
		case <-s.again:
			p.Signal(sig)
		case <-p.Done():
		}
	}()
	err = p.Wait()
	o, perr := outcome.Parse(bytes.TrimSpace(stdout.Bytes()))
	if perr != nil {
		why := strings.TrimSpace(stderr.String())
		if why == "" && err != nil {
			why = err.Error()
		}
		return result(outcome.Failure("toolkit %s ended without an answer (%s)", t.Name, why))
	}
	if raw, ok := o.Details.(json.RawMessage); ok {
		var d struct {
			Job string `json:"job"`
		}
		if json.Unmarshal(raw, &d) == nil && d.Job != "" {
			s.noteJob(d.Job)
		}
	}
	return result(o)
}

// result turns an Outcome into a tools/call result.
func result(o outcome.Outcome) *sdk.CallToolResult {
	content := []sdk.Content{&sdk.TextContent{Text: o.ModelText()}}
	if m := o.Media; m != nil {
		// The picture as an image block, a document as an embedded
		// resource; the structured content says what was sent without its
		// bytes, which a client would otherwise carry twice.
		if m.IsImage() {
			content = append(content, &sdk.ImageContent{Data: m.Data, MIMEType: m.Type})
		} else {
			content = append(content, &sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "toolkit://read/" + url.PathEscape(m.Name), MIMEType: m.Type, Blob: m.Data}})
		}
		o.Media = nil
	}
	return &sdk.CallToolResult{
		Content:           content,
		IsError:           o.Kind != outcome.Done,
		StructuredContent: json.RawMessage(o.JSON()),
	}
}
