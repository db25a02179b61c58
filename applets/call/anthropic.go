package call

import (
	"bytes"
	"context"
	"strings"
	"sync"

	"toolkit/internal/cmdline"
	"toolkit/internal/input"
	"toolkit/internal/outcome"
)

// The names Anthropic's built-in tools are called by.
const (
	bashTool   = "bash"                        // bash_20250124
	editorTool = "str_replace_based_edit_tool" // text_editor_20250728
	oldEditor  = "str_replace_editor"          // text_editor_20250124, the same commands
)

// anthropic runs a tool_use block's tool.
func anthropic(ctx context.Context, b block, h cmdline.Host) outcome.Outcome {
	switch b.Name {
	case bashTool:
		return bash(ctx, b.Input, h)
	case editorTool, oldEditor:
		return editor(ctx, b.Input, h)
	}
	return runTool(ctx, b.Name, b.Input, h)
}

// bashInput is the bash tool's input.
type bashInput struct {
	Command string `json:"command,omitempty"`
	Restart bool   `json:"restart,omitempty"`
}

// bash runs the bash tool's command with shell. Each command runs in a
// fresh shell, so restart has nothing to end and is answered as the tool
// documents a restart.
func bash(ctx context.Context, data []byte, h cmdline.Host) outcome.Outcome {
	var in bashInput
	if err := input.Decode(orEmpty(data), &in); err != nil {
		return outcome.Misuse("%s", err)
	}
	switch {
	case in.Restart:
		return outcome.Success("tool has been restarted.", nil)
	case in.Command == "":
		return outcome.Misuse("input: give command, or restart")
	}
	h.Bash = true // the model was told "run commands in a bash shell"
	return runTool(ctx, "shell", marshal(map[string]any{"command": in.Command}), h)
}

// editorInput is the text editor tool's input: one of its commands.
type editorInput struct {
	Command    string  `json:"command" check:"required,nonempty"`
	Path       string  `json:"path" check:"required,nonempty,nonul"`
	ViewRange  []int   `json:"view_range,omitempty"`
	FileText   *string `json:"file_text,omitempty"`
	OldStr     *string `json:"old_str,omitempty"`
	NewStr     *string `json:"new_str,omitempty"`
	InsertLine *int    `json:"insert_line,omitempty"`
	InsertText *string `json:"insert_text,omitempty"`
}

// editor maps the text editor's commands onto read (view), write (create,
// only where no file is, as the tool documents), edit (str_replace) and an
// insert after a line.
func editor(ctx context.Context, data []byte, h cmdline.Host) outcome.Outcome {
	var in editorInput
	if err := input.Decode(orEmpty(data), &in); err != nil {
		return outcome.Misuse("%s", err)
	}
	missing := func(name string) outcome.Outcome {
		return outcome.Misuse("input: %s needs %q", in.Command, name)
	}
	switch in.Command {
	case "view":
		if fi, err := h.Root.Stat(in.Path); err == nil && fi.IsDir() && in.ViewRange == nil {
			return viewDir(ctx, in.Path, h)
		}
		args := map[string]any{"path": in.Path}
		if r := in.ViewRange; r != nil {
			if len(r) != 2 || r[0] < 1 || r[1] != -1 && r[1] < r[0] {
				return outcome.Misuse("input: view_range must be [first, last] with 1 ≤ first ≤ last, or last -1 for the end; not %v", r)
			}
			args["offset"] = r[0]
			if r[1] != -1 {
				args["limit"] = r[1] - r[0] + 1
			}
		}
		return runTool(ctx, "read", marshal(args), h)
	case "create":
		if in.FileText == nil {
			return missing("file_text")
		}
		if _, err := h.Root.Stat(in.Path); err == nil {
			return outcome.Failure("%s: already exists; create makes a new file: change this one with str_replace", in.Path)
		}
		// Only where no file is, should one come between the look and the write.
		return runTool(ctx, "write", marshal(map[string]any{"path": in.Path, "content": *in.FileText, "if_match": "absent"}), h)
	case "str_replace":
		if in.OldStr == nil {
			return missing("old_str")
		}
		newStr := ""
		if in.NewStr != nil {
			newStr = *in.NewStr
		}
		o := runTool(ctx, "edit", marshal(map[string]any{"path": in.Path, "edits": []any{map[string]any{"old_text": *in.OldStr, "new_text": newStr}}}), h)
		o.Message = editorTerms().Replace(o.Message)
		return o
	case "insert":
		text := in.InsertText
		if text == nil {
			text = in.NewStr // text_editor_20250124 calls it new_str
		}
		switch {
		case in.InsertLine == nil:
			return missing("insert_line")
		case text == nil:
			return missing("insert_text")
		}
		return insert(ctx, in.Path, *in.InsertLine, *text, h)
	case "undo_edit":
		// The file's last change taken back, through history: a step
		// further back each time.
		return runTool(ctx, "undo", marshal(map[string]any{"path": in.Path}), h)
	}
	return outcome.Misuse("input: no command %q; the commands are view, create, str_replace, insert", in.Command)
}

// viewDir is the text editor's view of a directory, as the tool tells the
// model: "lists non-hidden files and directories up to 2 levels deep",
// through glob (every file, ignored ones too; at most glob's page).
func viewDir(ctx context.Context, path string, h cmdline.Host) outcome.Outcome {
	o := runTool(ctx, "glob", marshal(map[string]any{"pattern": "{*,*/*}", "path": path, "type": "any", "sort": "path", "no_ignore": true}), h)
	if o.Kind == outcome.Done {
		o.Text = "Here's the files and directories up to 2 levels deep in " + path + ", excluding hidden items:\n" + o.Text
	}
	return o
}

// editorTerms words edit's errors in the text editor tool's own terms: its
// str_replace has old_str and new_str, one replacement, and no replace_all.
var editorTerms = sync.OnceValue(func() *strings.Replacer {
	return strings.NewReplacer(
		"edits[0]: ", "",
		"old_text", "old_str",
		"new_text", "new_str",
		", or set replace_all", "",
	)
})

// insert is the text editor's insert: an edit that puts the text in as
// lines of their own after line n (0: before the first).
func insert(ctx context.Context, path string, n int, ins string, h cmdline.Host) outcome.Outcome {
	return runTool(ctx, "edit", marshal(map[string]any{"path": path, "edits": []any{map[string]any{"insert_line": n, "new_text": ins}}}), h)
}

// orEmpty is data, or an empty object when the block had no input.
func orEmpty(data []byte) []byte {
	if len(bytes.TrimSpace(data)) == 0 {
		return []byte("{}")
	}
	return data
}
