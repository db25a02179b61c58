// Package applets is the registry of toolkit's tools: each one's name, a
// description written for the model, its input's Args type (the strict
// decoder and the JSON Schema are both made from it, so they cannot
// disagree), hints for hosts, its command line and its in-process call.
// toolkit's command line, toolkit schema and toolkit mcp are built on it.
package applets

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"sync"

	"github.com/urfave/cli/v2"

	"toolkit/applets/diagnostics"
	"toolkit/applets/edit"
	"toolkit/applets/glob"
	"toolkit/applets/grep"
	"toolkit/applets/history"
	"toolkit/applets/job"
	"toolkit/applets/patch"
	"toolkit/applets/read"
	"toolkit/applets/shell"
	"toolkit/applets/undo"
	"toolkit/applets/wait"
	"toolkit/applets/write"
	"toolkit/internal/cmdline"
	"toolkit/internal/history/track"
	"toolkit/internal/outcome"
)

// Tool is one applet as hosts and models see it: what its declaration
// (cmdline.Applet) says, with its input's and its details' types.
type Tool struct {
	Name        string
	Description string
	Args        reflect.Type // the applet's Args struct
	Details     reflect.Type // the applet's Details struct: what --json adds to ok and text
	Hints       Hints
	// Command is the applet's command line.
	Command func() *cli.Command
	// Call decodes a JSON input strictly and runs the applet in this process.
	Call           func(ctx context.Context, data []byte, h cmdline.Host) outcome.Outcome
	Aliases        []string
	FlagsAfterArgs bool
	Settings       []cmdline.AnySetting
	Child          bool
	// History: the tool shows or takes back what history kept; not offered
	// where history is off.
	History  bool
	describe func(cmdline.Settings) string
}

// DescriptionFor is the tool's description under the host's settings s
// (nil: its own).
func (t Tool) DescriptionFor(s cmdline.Settings) string {
	if t.describe == nil || s == nil {
		return t.Description
	}
	return t.describe(s)
}

// Hints are cmdline's.
type Hints = cmdline.Hints

// tool is an applet as the registry lists it; one that shows what
// history kept (History) is wrapped so that it says history is off where
// the host turned it off.
func tool[A any](ap cmdline.Applet[A]) Tool {
	if ap.History {
		ap.Around = append([]cmdline.Around{track.Kept}, ap.Around...)
	}
	return Tool{
		Name: ap.Name, Description: ap.Description, Args: reflect.TypeFor[A](), Details: reflect.TypeOf(ap.Details), Hints: ap.Hints,
		Command: ap.Command, Call: ap.Call, Aliases: ap.Aliases, FlagsAfterArgs: ap.FlagsAfterArgs, Settings: ap.Settings, Child: ap.Child, History: ap.History, describe: ap.Describe,
	}
}

// All returns the tools, in the order hosts list them.
func All() []Tool { return registry().tools }

// ModelFlags are every tool's host settings, each once, with the model's
// defaults: the flags of toolkit mcp and toolkit call.
func ModelFlags() []cli.Flag {
	var fs []cli.Flag
	for _, s := range registry().settings {
		fs = append(fs, s.Flag(true))
	}
	return fs
}

// PersonFlags are every tool's host settings, each once, with the command
// line's defaults: the ceilings of a call run once per process.
func PersonFlags() []cli.Flag {
	var fs []cli.Flag
	for _, s := range registry().settings {
		fs = append(fs, s.Flag(false))
	}
	return fs
}

// registry is the tools, built once: a name, an alias or a host setting
// that two of them declare differently is refused here, where the tools
// register, not found colliding when a host runs toolkit mcp.
var registry = sync.OnceValue(func() reg {
	r, err := build(tool(diagnostics.Applet), tool(edit.Applet), tool(glob.Applet), tool(grep.Applet), tool(history.Applet), tool(job.Applet), tool(patch.Applet), tool(read.Applet), tool(shell.Applet), tool(undo.Applet), tool(wait.Applet), tool(write.Applet))
	if err != nil {
		panic(err)
	}
	return r
})

type reg struct {
	tools    []Tool
	settings []cmdline.AnySetting // each once, in the order the tools list them
}

func build(tools ...Tool) (reg, error) {
	r := reg{tools: tools}
	names := map[string]bool{}
	settings := map[string]cmdline.AnySetting{}
	for _, t := range tools {
		for _, n := range append([]string{t.Name}, t.Aliases...) {
			if names[n] {
				return reg{}, fmt.Errorf("two tools are called %q", n)
			}
			names[n] = true
		}
		for _, s := range t.Settings {
			switch had, ok := settings[s.Key()]; {
			case !ok:
				settings[s.Key()] = s
				r.settings = append(r.settings, s)
			case had != s:
				return reg{}, fmt.Errorf("%s declares a host setting --%s of its own: another tool has one of that name; share it", t.Name, s.Key())
			}
		}
	}
	return r, nil
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
