// Package applets is the registry of toolkit's tools: each one's name, a
// description written for the model, its input's Args type (the strict
// decoder and the JSON Schema are both made from it, so they cannot
// disagree), hints for hosts, its command line and its in-process call.
// toolkit's command line, toolkit schema and toolkit mcp are built on it.
package applets

import (
	"context"
	"reflect"
	"slices"

	"github.com/urfave/cli/v2"

	"toolkit/applets/edit"
	"toolkit/applets/glob"
	"toolkit/applets/grep"
	"toolkit/applets/job"
	"toolkit/applets/patch"
	"toolkit/applets/read"
	"toolkit/applets/shell"
	"toolkit/applets/write"
	"toolkit/internal/cmdline"
	"toolkit/internal/outcome"
)

// Tool is one applet as hosts and models see it.
type Tool struct {
	Name        string
	Description string
	Args        reflect.Type // the applet's Args struct
	Details     reflect.Type // the applet's Details struct: what --json adds to ok and text
	Hints       Hints
	// Command is the applet's command line.
	Command func() *cli.Command
	// Call decodes a JSON input strictly and runs the applet in this process.
	Call func(ctx context.Context, data []byte, h cmdline.Host) outcome.Outcome
	// Aliases are other names its link may have (apply_patch).
	Aliases []string
	// FlagsAfterArgs says its command line takes flags after its arguments
	// (edit PATH --old TEXT --new TEXT).
	FlagsAfterArgs bool
	// ModelFlags are the host settings toolkit mcp and toolkit call take
	// for this tool, with the defaults they give them: a model's context is
	// smaller than a person's terminal.
	ModelFlags []cli.Flag
	// Child says that toolkit mcp runs each call as a child toolkit: the
	// tools that start processes, so that a call that crashes or leaves
	// processes behind cannot take the server with it, and its process tree
	// is simply every descendant of that child.
	Child bool
}

// Hints say what a tool may do to the world, for hosts that ask before
// running one (MCP's annotations).
type Hints struct {
	ReadOnly    bool `json:"read_only"`
	Idempotent  bool `json:"idempotent"`
	Destructive bool `json:"destructive"`
	OpenWorld   bool `json:"open_world"`
}

func tool[A, D any](ap cmdline.Applet[A], _ D, description string, hints Hints, child bool) Tool {
	return Tool{
		Name: ap.Name, Description: description, Args: reflect.TypeFor[A](), Details: reflect.TypeFor[D](), Hints: hints,
		Command: ap.Command, Call: ap.Call, Child: child,
	}
}

func withAliases(t Tool, names ...string) Tool {
	t.Aliases = names
	return t
}

func withModelFlags(t Tool, flags []cli.Flag) Tool {
	t.ModelFlags = flags
	return t
}

func withFlagsAfterArgs(t Tool) Tool {
	t.FlagsAfterArgs = true
	return t
}

// All returns the tools, in the order hosts list them.
func All() []Tool {
	return []Tool{
		withFlagsAfterArgs(tool(edit.Applet, edit.Details{}, edit.Description, Hints{Destructive: true}, false)),
		withFlagsAfterArgs(tool(glob.Applet, glob.Details{}, glob.Description, Hints{ReadOnly: true, Idempotent: true}, false)),
		withFlagsAfterArgs(tool(grep.Applet, grep.Details{}, grep.Description, Hints{ReadOnly: true, Idempotent: true}, false)),
		withFlagsAfterArgs(tool(job.Applet, job.Details{}, job.Description, Hints{Destructive: true, OpenWorld: true}, false)),
		withAliases(tool(patch.Applet, patch.Details{}, patch.Description, Hints{Destructive: true}, false), "apply_patch"),
		withModelFlags(tool(read.Applet, read.Details{}, read.Description, Hints{ReadOnly: true, Idempotent: true}, false), read.HostFlags(read.MCPMaxText)),
		withModelFlags(tool(shell.Applet, shell.Details{}, shell.Description, Hints{Destructive: true, OpenWorld: true}, true), shell.HostFlags(shell.MCPMaxOutput)),
		tool(write.Applet, write.Details{}, write.Description, Hints{Idempotent: true, Destructive: true}, false),
	}
}

// ModelFlags are every tool's ModelFlags, for toolkit mcp and toolkit call.
func ModelFlags() []cli.Flag {
	var fs []cli.Flag
	for _, t := range All() {
		fs = append(fs, t.ModelFlags...)
	}
	return fs
}

// Find returns the tool called name, or one of its aliases.
func Find(name string) (Tool, bool) {
	for _, t := range All() {
		if t.Name == name || slices.Contains(t.Aliases, name) {
			return t, true
		}
	}
	return Tool{}, false
}

// Names are the tools' names, in order.
func Names() []string {
	var names []string
	for _, t := range All() {
		names = append(names, t.Name)
	}
	return names
}
