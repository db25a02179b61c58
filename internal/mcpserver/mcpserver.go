// Package mcpserver serves toolkit's tools over the Model Context Protocol,
// on stdin and stdout, with the official Go SDK:
//
//	toolkit mcp [--root DIR]
//	docker exec -i BOX toolkit mcp
//
// tools/list gives read, shell and write with their schemas and hints;
// tools/call runs exactly the applet's code and returns the Outcome's text as
// content, isError for tool and usage errors, and the Outcome's --json object
// as structured content. Calls run at once and in parallel; a cancelled call
// (notifications/cancelled) stops the shell command's whole tree as a
// timeout does. Nothing but protocol messages goes to stdout; warnings go to
// stderr. SIGTERM, SIGINT or SIGHUP, or the end of stdin, stop the calls
// still running and end the server once their trees are gone.
package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/urfave/cli/v2"

	"toolkit/internal/applet"
	"toolkit/internal/input"
	"toolkit/internal/outcome"
	"toolkit/internal/tools"
)

// Usage is mcp's usage line.
const Usage = "toolkit mcp [--root DIR]"

// maxMessage bounds one JSON-RPC message: the 64 MiB of input toolkit
// takes, and room for the envelope around it.
const maxMessage = input.MaxSize + 1<<20

// Command is the mcp subcommand.
func Command(version string) *cli.Command {
	return &cli.Command{
		Name:      "mcp",
		Usage:     "serve the tools over the Model Context Protocol on stdin and stdout",
		UsageText: Usage,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "root", Usage: "confine every call's paths to `DIR` (also TOOLKIT_ROOT)", EnvVars: []string{"TOOLKIT_ROOT"}},
		},
		OnUsageError: applet.FlagError(Usage),
		Action: func(c *cli.Context) error {
			r, err := applet.OpenRoot(c)
			if err != nil {
				o := outcome.Misuse("%s", err)
				o.Usage = Usage
				return applet.ReturnIn(c, o, outcome.TextMode)
			}
			defer r.Close()
			h := tools.Host{Root: r}
			ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
			defer stop()
			s := New(version, h)
			out := &lockedWriter{w: os.Stdout}
			err = s.Run(ctx, &mcp.IOTransport{Reader: newFilter(os.Stdin, out, maxMessage), Writer: out})
			if err != nil && ctx.Err() == nil && !endOfInput(err) {
				return applet.ReturnIn(c, outcome.Failure("%s", err), outcome.TextMode)
			}
			return nil
		},
	}
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
// did: io.EOF, or the SDK's "server is closing" (-32004) made of it, which
// keeps the EOF only as text.
func endOfInput(err error) bool {
	if errors.Is(err, io.EOF) {
		return true
	}
	var we *jsonrpc.Error
	return errors.As(err, &we) && we.Code == -32004 && strings.HasSuffix(err.Error(), ": EOF")
}

// Server is toolkit's MCP server.
type Server struct {
	mcp   *mcp.Server
	calls sync.WaitGroup
}

// New returns a server for the tools, every call confined as h says.
func New(version string, h tools.Host) *Server {
	s := &Server{mcp: mcp.NewServer(&mcp.Implementation{Name: "toolkit", Version: version}, &mcp.ServerOptions{
		Logger: slog.New(quietEOF{slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})}),
	})}
	for _, t := range tools.All() {
		s.mcp.AddTool(&mcp.Tool{
			Name:        t.Name,
			Description: t.Description,
			InputSchema: tools.InputSchema(t.Args),
			Annotations: &mcp.ToolAnnotations{
				ReadOnlyHint:    t.Hints.ReadOnly,
				IdempotentHint:  t.Hints.Idempotent,
				DestructiveHint: &t.Hints.Destructive,
				OpenWorldHint:   &t.Hints.OpenWorld,
			},
		}, s.handler(t, h))
	}
	return s
}

// Run serves t until it closes or ctx ends, then waits for the calls still
// running: they are cancelled, and a shell call stops its tree first.
func (s *Server) Run(ctx context.Context, t mcp.Transport) error {
	err := s.mcp.Run(ctx, t)
	s.calls.Wait()
	return err
}

// Connect serves one session on t, for tests.
func (s *Server) Connect(ctx context.Context, t mcp.Transport) (*mcp.ServerSession, error) {
	return s.mcp.Connect(ctx, t, nil)
}

func (s *Server) handler(t tools.Tool, h tools.Host) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		s.calls.Add(1)
		defer s.calls.Done()
		// The decoder unescapes in place: give it a copy of its own.
		args := bytes.Clone(req.Params.Arguments)
		if a := bytes.TrimSpace(args); len(a) == 0 || string(a) == "null" {
			args = []byte("{}") // no arguments: every field left out
		}
		return result(t.Call(ctx, args, h)), nil
	}
}

// result turns an Outcome into a tools/call result.
func result(o outcome.Outcome) *mcp.CallToolResult {
	text := o.Text
	if o.Kind != outcome.Done {
		text = o.Message // the usage line is the command line's, not the model's
	}
	return &mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: text}},
		IsError:           o.Kind != outcome.Done,
		StructuredContent: json.RawMessage(o.JSON()),
	}
}
