// Package tools describes toolkit's applets as tools a model can be given:
// each one's name, a description written for the model, its input's JSON
// Schema (made from the same Args type the strict decoder fills, so the two
// cannot disagree), hints for hosts, and a way to call it from JSON input.
// The schema subcommand and the MCP server are built on it.
package tools

import (
	"context"
	"reflect"

	"toolkit/applets/read"
	"toolkit/applets/shell"
	"toolkit/applets/write"
	"toolkit/internal/input"
	"toolkit/internal/outcome"
	"toolkit/internal/root"
)

// Tool is one applet as a model sees it.
type Tool struct {
	Name        string
	Description string
	Args        reflect.Type // the applet's Args struct
	Hints       Hints
	// Call decodes a JSON input strictly and runs the applet.
	Call func(ctx context.Context, data []byte, h Host) outcome.Outcome
}

// Hints say what a tool may do to the world, for hosts that ask before
// running one (MCP's annotations).
type Hints struct {
	ReadOnly    bool `json:"read_only"`
	Idempotent  bool `json:"idempotent"`
	Destructive bool `json:"destructive"`
	OpenWorld   bool `json:"open_world"`
}

// Host is what the host sets for every call.
type Host struct {
	Root *root.Root
}

// call is every Call: decode the input strictly into an A (a usage error
// names what is wrong), then run it.
func call[A any](data []byte, usage string, run func(*A) outcome.Outcome) outcome.Outcome {
	var a A
	if err := input.Decode(data, &a); err != nil {
		o := outcome.Misuse("%s", err)
		o.Usage = usage
		return o
	}
	return run(&a)
}

// All returns the tools, in the order hosts list them.
func All() []Tool {
	return []Tool{
		{
			Name:        "shell",
			Description: shellDescription,
			Args:        reflect.TypeFor[shell.Args](),
			Hints:       Hints{Destructive: true, OpenWorld: true},
			Call: func(ctx context.Context, data []byte, h Host) outcome.Outcome {
				return call(data, shell.Usage, func(a *shell.Args) outcome.Outcome {
					a.Host = shell.Options{Root: h.Root}
					return shell.Run(ctx, *a)
				})
			},
		},
		{
			Name:        "read",
			Description: readDescription,
			Args:        reflect.TypeFor[read.Args](),
			Hints:       Hints{ReadOnly: true, Idempotent: true},
			Call: func(_ context.Context, data []byte, h Host) outcome.Outcome {
				return call(data, read.Usage, func(a *read.Args) outcome.Outcome {
					a.Host = read.Options{Root: h.Root, Hash: true}
					return read.Run(*a)
				})
			},
		},
		{
			Name:        "write",
			Description: writeDescription,
			Args:        reflect.TypeFor[write.Args](),
			Hints:       Hints{Idempotent: true, Destructive: true},
			Call: func(_ context.Context, data []byte, h Host) outcome.Outcome {
				return call(data, write.Usage, func(a *write.Args) outcome.Outcome {
					a.Host = write.Options{Root: h.Root, Hash: true}
					return write.Run(*a)
				})
			},
		},
	}
}

// Find returns the tool called name.
func Find(name string) (Tool, bool) {
	for _, t := range All() {
		if t.Name == name {
			return t, true
		}
	}
	return Tool{}, false
}

const shellDescription = `Run a command in the sandbox with /bin/sh -c, and get its output and how it ended. Use it to build, test, run programs, search (grep, find), use git, and anything else a shell does.

Returns stdout and stderr together, in the order they were written, cleaned of terminal colours and progress-bar redraws, then one bracketed line per thing that happened, and a last line that is exactly one of [exit N], [killed by signal N (NAME)] or [ended without a status]. A command that fails is a normal result, not an error of this tool: read the last line.

Limits: output over 1 MiB is cut; you get its start, its end, the lines in between that look like failures (error, fail, fatal, panic, exception, traceback) with their line numbers, and a line naming a file that holds the whole output (read it with the read tool). timeout_secs is 120 by default, at most 600; without timeout_secs, a command silent for 60 s is also stopped. A stop ends every process the command started. Processes left in the background that keep the output open (server &) go on running, and their further output goes to a log named in the text.

Each call is a fresh shell: cd and exported variables do not carry over (use cwd and env). stdin is empty unless given. Prefer the read and write tools for looking at and changing files.`

const readDescription = `Read a text file in the sandbox as numbered lines, or list a directory. Use it to look at source, logs and output files before changing or quoting them.

Each line is its number, a tab, and the line, as cat -n prints them: when you quote or edit a line, leave the number and the tab out. The first 2000 lines by default; offset (from 1) and limit choose others, and a negative offset reads from the end (offset -100: the last 100 lines, numbered -100 to -1). When more lines follow, a last line in brackets says which offset to read next.

Limits: a line over 2000 characters is cut and says how much was left out; at most 256 KiB of text per call. A binary file is refused with its type and size. A directory lists its entries, directories with a trailing /. The result's details include the file's sha256, for the write tool's if_match.`

const writeDescription = `Create a file in the sandbox, or replace its whole content. Use it to write new files and to save edited ones: give the complete new content, not a change.

The content is written byte for byte (no newline is added or removed) and atomically: anyone reading the file sees the old content or the new one, never a mix. Parent directories are created; a symbolic link is written through to its target. Returns the number of bytes and lines written.

To be sure you are not overwriting changes you have not seen, pass if_match: the sha256 the read tool gave for the file, or "absent" to only create a new file. If the file changed since, nothing is written and the error says so; read it again.`
