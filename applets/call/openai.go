package call

import (
	"context"
	"fmt"
	"strings"

	"github.com/go-json-experiment/json"

	"toolkit/internal/cmdline"
	"toolkit/internal/outcome"
	"toolkit/internal/proc"
)

// shellAction is a shell_call's action.
type shellAction struct {
	Commands        []string `json:"commands"`
	TimeoutMS       *int     `json:"timeout_ms"`
	MaxOutputLength *int     `json:"max_output_length"`
}

type shellCallOutput struct {
	Type            string       `json:"type"`
	CallID          string       `json:"call_id"`
	MaxOutputLength *int         `json:"max_output_length,omitzero"`
	Output          []shellChunk `json:"output"`
}

type shellChunk struct {
	Stdout  string       `json:"stdout"`
	Stderr  string       `json:"stderr"`
	Outcome shellOutcome `json:"outcome"`
}

type shellOutcome struct {
	Type     string `json:"type"` // "exit" or "timeout"
	ExitCode *int   `json:"exit_code,omitzero"`
}

// shellCall runs a shell_call's commands in order, each as one shell call
// with the action's timeout and output length, and answers one output per
// command. toolkit's one pipe gives each command's whole text, its closing
// line included, as its stdout; stderr holds toolkit's own error when a
// command could not be run.
func shellCall(ctx context.Context, b block, h cmdline.Host) (any, bool, error) {
	var a shellAction
	if err := json.Unmarshal(orEmpty(b.Action), &a); err != nil {
		return nil, false, fmt.Errorf("a shell_call's action: %s", reason(err))
	}
	if len(a.Commands) == 0 {
		return nil, false, fmt.Errorf("a shell_call's action needs commands")
	}
	res := shellCallOutput{Type: "shell_call_output", CallID: b.CallID, MaxOutputLength: a.MaxOutputLength, Output: []shellChunk{}}
	h.Bash = true // models write bash for the shell tool's commands
	failed := false
	for _, c := range a.Commands {
		args := map[string]any{"command": c}
		if a.TimeoutMS != nil {
			args["timeout_secs"] = seconds(*a.TimeoutMS)
		}
		if a.MaxOutputLength != nil {
			args["max_output"] = max(1, *a.MaxOutputLength)
		}
		o := runTool(ctx, "shell", marshal(args), h)
		chunk := shellChunk{Outcome: outcomeOf(o)}
		if o.Kind == outcome.Done {
			chunk.Stdout = o.Text
		} else {
			chunk.Stderr = o.Message
			failed = true
		}
		res.Output = append(res.Output, chunk)
	}
	return res, failed, nil
}

// outcomeOf is how a shell call ended, as the Responses API says it: a
// timeout (or a stop for silence), or an exit with the command's status
// (128+N for signal N; toolkit's 1 or 2 when the command was not run).
func outcomeOf(o outcome.Outcome) shellOutcome {
	code := func(n int) shellOutcome { return shellOutcome{Type: "exit", ExitCode: &n} }
	switch c := o.Command; {
	case o.Kind != outcome.Done || c == nil:
		return code(o.ExitStatus())
	case c.TimedOut:
		return shellOutcome{Type: "timeout"}
	default:
		return code(c.Status)
	}
}

// localShellAction is a local_shell_call's action.
type localShellAction struct {
	Type             string            `json:"type"`
	Command          []string          `json:"command"`
	Env              map[string]string `json:"env"`
	TimeoutMS        *int              `json:"timeout_ms"`
	WorkingDirectory string            `json:"working_directory"`
}

type localShellCallOutput struct {
	Type   string `json:"type"`
	ID     string `json:"id"` // the call's call_id
	Output string `json:"output"`
}

// localShellCall runs a local_shell_call's argv, quoted for sh, with its
// environment, directory and timeout. Its output is a JSON string, as the
// Responses API asks: the text and the exit code. toolkit runs as the user
// it is; the action's user is not taken.
func localShellCall(ctx context.Context, b block, h cmdline.Host) (any, bool, error) {
	var a localShellAction
	if err := json.Unmarshal(orEmpty(b.Action), &a); err != nil {
		return nil, false, fmt.Errorf("a local_shell_call's action: %s", reason(err))
	}
	if a.Type != "exec" || len(a.Command) == 0 {
		return nil, false, fmt.Errorf(`a local_shell_call's action needs type "exec" and a command`)
	}
	quoted := make([]string, len(a.Command))
	for i, arg := range a.Command {
		quoted[i] = proc.Quote(arg)
	}
	args := map[string]any{"command": strings.Join(quoted, " ")}
	if len(a.Env) > 0 {
		args["env"] = a.Env
	}
	if a.WorkingDirectory != "" {
		args["cwd"] = a.WorkingDirectory
	}
	if a.TimeoutMS != nil {
		args["timeout_secs"] = seconds(*a.TimeoutMS)
	}
	o := runTool(ctx, "shell", marshal(args), h)
	oc := outcomeOf(o)
	meta := map[string]any{"exit_code": oc.ExitCode, "timed_out": oc.Type == "timeout"}
	if o.Command != nil {
		meta["duration_seconds"] = float64(o.Command.Duration.Milliseconds()) / 1000
	}
	out := marshal(map[string]any{"output": o.ModelText(), "metadata": meta})
	return localShellCallOutput{Type: "local_shell_call_output", ID: b.CallID, Output: string(out)}, o.Kind != outcome.Done, nil
}

// patchOperation is an apply_patch_call's operation.
type patchOperation struct {
	Type string `json:"type"`
	Path string `json:"path"`
	Diff string `json:"diff"`
}

type applyPatchCallOutput struct {
	Type   string `json:"type"`
	CallID string `json:"call_id"`
	Status string `json:"status"` // "completed" or "failed"
	Output string `json:"output"`
}

// applyPatchCall applies an apply_patch_call's operation to the one path it
// names, never to another: create_file writes the file with write, its
// content read from the diff's "+" lines as the OpenAI Agents SDK's
// apply_diff reads them (joined by the diff's line end, with none after the
// last); update_file applies the diff as the hunks of one "*** Update File"
// section with patch, and delete_file deletes with patch. A path on more than
// one line, or with blanks at its ends, and an update diff holding a line of
// the envelope's own (a file header, End Patch) are refused: the operation's
// text is never let loose as a patch of its own.
func applyPatchCall(ctx context.Context, b block, h cmdline.Host) (any, bool, error) {
	var op patchOperation
	if err := json.Unmarshal(orEmpty(b.Operation), &op); err != nil {
		return nil, false, fmt.Errorf("an apply_patch_call's operation: %s", reason(err))
	}
	switch op.Type {
	case "create_file", "update_file", "delete_file":
	default:
		return nil, false, fmt.Errorf("no apply_patch operation %q: toolkit reads create_file, update_file and delete_file", op.Type)
	}
	if op.Path == "" {
		return nil, false, fmt.Errorf("an apply_patch_call's operation needs a path")
	}
	failed := func(format string, args ...any) (any, bool, error) {
		return applyPatchCallOutput{Type: "apply_patch_call_output", CallID: b.CallID, Status: "failed", Output: fmt.Sprintf(format, args...)}, true, nil
	}
	if strings.ContainsAny(op.Path, "\r\n") || strings.TrimSpace(op.Path) != op.Path {
		return failed("%s %q: a path is one line, with no blanks at its ends", op.Type, op.Path)
	}
	var o outcome.Outcome
	switch op.Type {
	case "create_file":
		content, err := createContent(op.Diff)
		if err != nil {
			return failed("create_file %s: %s", op.Path, err)
		}
		o = runTool(ctx, "write", marshal(map[string]any{"path": op.Path, "content": content}), h)
	case "update_file":
		body := op.Diff
		if line, ok := envelopeLine(body); ok {
			return failed("update_file %s: its diff holds %q, a line of the patch format itself: an operation changes its own file only", op.Path, line)
		}
		if body != "" && !strings.HasSuffix(body, "\n") {
			body += "\n"
		}
		o = runTool(ctx, "patch", marshal(map[string]any{"patch": "*** Begin Patch\n*** Update File: " + op.Path + "\n" + body + "*** End Patch\n"}), h)
	default:
		o = runTool(ctx, "patch", marshal(map[string]any{"patch": "*** Begin Patch\n*** Delete File: " + op.Path + "\n*** End Patch\n"}), h)
	}
	status := "completed"
	if o.Kind != outcome.Done {
		status = "failed"
	}
	return applyPatchCallOutput{Type: "apply_patch_call_output", CallID: b.CallID, Status: status, Output: o.ModelText()}, o.Kind != outcome.Done, nil
}

// createContent is the content of a create_file diff, as the Agents SDK's
// apply_diff makes it: every line starts with "+"; the lines without it,
// joined by the diff's own line end ("\r\n" if it has one), with none after
// the last.
func createContent(diff string) (string, error) {
	eol := "\n"
	if strings.Contains(diff, "\r\n") {
		eol = "\r\n"
	}
	lines := strings.Split(strings.ReplaceAll(diff, "\r\n", "\n"), "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	for i, l := range lines {
		if !strings.HasPrefix(l, "+") {
			return "", fmt.Errorf("line %d of the diff, %q, does not start with \"+\": a new file's diff is its lines, each after a \"+\"", i+1, l)
		}
		lines[i] = l[1:]
	}
	return strings.Join(lines, eol), nil
}

// envelopeLine finds a line of a diff that the envelope would take as its
// own: a file header, Move to, Begin or End Patch.
func envelopeLine(diff string) (string, bool) {
	for l := range strings.Lines(diff) {
		m := strings.TrimSpace(l)
		if strings.HasPrefix(m, "*** ") && m != "*** End of File" {
			return m, true
		}
	}
	return "", false
}

// seconds is a timeout in milliseconds as whole seconds, rounded up, at
// least 1: the largest int gives the largest seconds, which shell caps at
// the host's ceiling and says so (an addition before the division
// overflowed it into a 1 s timeout).
func seconds(ms int) int {
	s := ms / 1000
	if ms%1000 > 0 {
		s++
	}
	return max(1, s)
}
