// Package call carries out one tool-call block as a model API produced it,
// and prints the result block that API expects, so that a host's glue is
// one pipe:
//
//	toolkit call < block.json > result.json
//
// Anthropic's Messages API: a tool_use block, for toolkit's own tools by
// name and for the built-in bash (bash_20250124) and text editor
// (text_editor_20250728, str_replace_based_edit_tool) → tool_result with
// its tool_use_id. OpenAI's Responses API: function_call (arguments as a
// JSON string) → function_call_output; shell_call → shell_call_output, one
// output per command; local_shell_call → local_shell_call_output;
// apply_patch_call → apply_patch_call_output; each with its call_id. A JSON
// array of blocks gives an array of results, in order.
//
// A block whose tool fails, or whose input is wrong, is still answered,
// with the error in the result for the model, and toolkit exits 1. A block
// toolkit cannot read at all (not JSON, no type it knows, no id) is a
// usage error, exit 2: alone, with nothing on stdout; in an array, the
// others are answered and it is answered with its error in its place.
package call

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/urfave/cli/v2"

	"toolkit/applets"
	"toolkit/internal/cmdline"
	"toolkit/internal/input"
	"toolkit/internal/outcome"
	"toolkit/internal/proc"
)

// Usage is call's usage line.
const Usage = "toolkit call [--root DIR] [host flags] < block.json"

// Command is the call subcommand.
func Command() *cli.Command {
	return &cli.Command{
		Name:         "call",
		Usage:        "carry out one model API tool-call block and print its result block",
		UsageText:    Usage,
		Description:  cmdline.EnvHelp,
		Flags:        append([]cli.Flag{cmdline.RootFlag("confine every path to `DIR`")}, applets.ModelFlags()...),
		OnUsageError: cmdline.UsageError(Usage),
		Action: func(c *cli.Context) error {
			misuse := func(err error) error { return cmdline.Misuse(c, err, Usage) }
			if c.NArg() > 0 {
				return misuse(fmt.Errorf("no arguments: the block is read from stdin"))
			}
			r, err := cmdline.OpenRoot(c)
			if err != nil {
				return misuse(err)
			}
			defer r.Close()
			if err := cmdline.CheckConfine(c, r); err != nil {
				return misuse(err)
			}
			data, err := input.Read(os.Stdin)
			if err != nil {
				return misuse(err)
			}
			ctx, stop, again := cmdline.SignalContext()
			defer stop()
			h := cmdline.Host{Root: r, Settings: c, Signals: again, Details: true}
			// An array whose blocks are answered, some with an error, is
			// printed, and is a usage error all the same.
			out, failed, err := Run(ctx, data, h)
			proc.Caught() // a closed output is an error, not the end of toolkit
			if out != nil {
				fmt.Fprintf(c.App.Writer, "%s\n", out)
			}
			if err != nil {
				return misuse(err)
			}
			if failed {
				return cli.Exit("", 1)
			}
			return nil
		},
	}
}

// Run carries out a block, or an array of blocks, and returns the result
// JSON and whether any result is an error. An error is a block it cannot
// read: for an array, the results are returned with it, that block's an
// error.
func Run(ctx context.Context, data []byte, h cmdline.Host) ([]byte, bool, error) {
	t := bytes.TrimLeft(data, " \t\r\n")
	if len(t) > 0 && t[0] == '[' {
		var blocks []jsontext.Value
		if err := json.Unmarshal(data, &blocks); err != nil {
			return nil, false, fmt.Errorf("the blocks are not a JSON array: %s", reason(err))
		}
		var results []any
		failed := false
		var unread []string
		for i, b := range blocks {
			res, bad, err := one(ctx, b, h)
			if err != nil {
				// The blocks before it ran, and those after it run: each is
				// answered, this one with its error, so a host learns what
				// was done and does not run it again.
				res = blockError(i, b, err)
				unread = append(unread, fmt.Sprintf("block %d: %s", i, err))
			}
			results = append(results, res)
			failed = failed || bad
		}
		out, err := json.Marshal(results, json.Deterministic(true))
		if err == nil && unread != nil {
			// One line, as every usage error is.
			return out, true, errors.New(strings.Join(unread, "; "))
		}
		return out, failed, err
	}
	res, failed, err := one(ctx, data, h)
	if err != nil {
		return nil, false, err
	}
	out, err := json.Marshal(res, json.Deterministic(true))
	return out, failed, err
}

// unreadBlock answers a block of an array that toolkit cannot read.
type unreadBlock struct {
	Type   string `json:"type"` // "error"
	Index  int    `json:"index"`
	ID     string `json:"id,omitempty"`
	CallID string `json:"call_id,omitempty"`
	Error  string `json:"error"`
}

// blockError is the answer to block i, which could not be read: with its
// id or call_id if it has one, so a host can tell which it was.
func blockError(i int, data []byte, err error) unreadBlock {
	var b block
	_ = json.Unmarshal(data, &b)
	return unreadBlock{Type: "error", Index: i, ID: b.ID, CallID: b.CallID, Error: err.Error()}
}

// block is what toolkit reads of any block; other members are ignored.
type block struct {
	Type string `json:"type"`
	// Anthropic
	ID    string         `json:"id"`
	Name  string         `json:"name"`
	Input jsontext.Value `json:"input"`
	// OpenAI
	CallID    string         `json:"call_id"`
	Arguments *string        `json:"arguments"`
	Action    jsontext.Value `json:"action"`
	Operation jsontext.Value `json:"operation"`
}

// one carries out one block.
func one(ctx context.Context, data []byte, h cmdline.Host) (any, bool, error) {
	var b block
	if err := json.Unmarshal(data, &b); err != nil {
		return nil, false, fmt.Errorf("the block is not a JSON object: %s", reason(err))
	}
	// need words what a block lacks in one line: "needs an id and a name".
	need := func(fields ...string) error {
		var missing []string
		for i := 0; i+1 < len(fields); i += 2 {
			if fields[i+1] == "" {
				missing = append(missing, fields[i])
			}
		}
		if len(missing) == 0 {
			return nil
		}
		return fmt.Errorf("a %s block needs %s", b.Type, strings.Join(missing, " and "))
	}
	switch b.Type {
	case "tool_use":
		if err := need("an id", b.ID, "a name", b.Name); err != nil {
			return nil, false, err
		}
		o := anthropic(ctx, b, h)
		return toolResult{Type: "tool_result", ToolUseID: b.ID, Content: anthropicContent(o), IsError: o.Kind != outcome.Done}, o.Kind != outcome.Done, nil
	case "function_call":
		if err := need("a call_id", b.CallID, "a name", b.Name); err != nil {
			return nil, false, err
		}
		if b.Arguments == nil {
			return nil, false, fmt.Errorf("a function_call block needs arguments (a JSON string)")
		}
		o := runTool(ctx, b.Name, []byte(*b.Arguments), h)
		return functionOutput{Type: "function_call_output", CallID: b.CallID, Output: openaiOutput(o)}, o.Kind != outcome.Done, nil
	case "shell_call":
		if err := need("a call_id", b.CallID); err != nil {
			return nil, false, err
		}
		return shellCall(ctx, b, h)
	case "local_shell_call":
		if b.CallID == "" {
			b.CallID = b.ID
		}
		if err := need("a call_id", b.CallID); err != nil {
			return nil, false, err
		}
		return localShellCall(ctx, b, h)
	case "apply_patch_call":
		if err := need("a call_id", b.CallID); err != nil {
			return nil, false, err
		}
		return applyPatchCall(ctx, b, h)
	case "":
		return nil, false, fmt.Errorf("the block has no type")
	}
	return nil, false, fmt.Errorf("no block type %q: toolkit reads tool_use, function_call, shell_call, local_shell_call and apply_patch_call", b.Type)
}

// The result blocks.
type toolResult struct {
	Type      string `json:"type"`
	ToolUseID string `json:"tool_use_id"`
	Content   any    `json:"content"` // the text, or blocks with a picture or a document
	IsError   bool   `json:"is_error,omitzero"`
}

type functionOutput struct {
	Type   string `json:"type"`
	CallID string `json:"call_id"`
	Output any    `json:"output"` // the text, or items with a picture or a document
}

// Anthropic's content blocks for a tool_result: TextBlockParam, and
// ImageBlockParam or DocumentBlockParam with a base64 source.
type (
	textBlock struct {
		Type string `json:"type"` // "text"
		Text string `json:"text"`
	}
	sourceBlock struct {
		Type   string       `json:"type"` // "image" or "document"
		Source base64Source `json:"source"`
	}
	base64Source struct {
		Type      string `json:"type"` // "base64"
		MediaType string `json:"media_type"`
		Data      []byte `json:"data"`
	}
)

// anthropicContent is a tool_result's content: the text, or, with a
// picture or a document, a text block and an image or document block.
func anthropicContent(o outcome.Outcome) any {
	m := o.Media
	if m == nil {
		return o.ModelText()
	}
	kind := "document"
	if m.IsImage() {
		kind = "image"
	}
	return []any{textBlock{"text", o.Text}, sourceBlock{kind, base64Source{"base64", m.Type, m.Data}}}
}

// OpenAI's items for a function_call_output: input_text, and input_image
// or input_file, each with the bytes as a data URL.
type (
	inputText struct {
		Type string `json:"type"` // "input_text"
		Text string `json:"text"`
	}
	inputImage struct {
		Type     string `json:"type"` // "input_image"
		ImageURL string `json:"image_url"`
	}
	inputFile struct {
		Type     string `json:"type"` // "input_file"
		Filename string `json:"filename"`
		FileData string `json:"file_data"`
	}
)

// openaiOutput is a function_call_output's output: the text, or, with a
// picture or a document, an input_text and an input_image or input_file.
func openaiOutput(o outcome.Outcome) any {
	m := o.Media
	if m == nil {
		return o.ModelText()
	}
	url := "data:" + m.Type + ";base64," + base64.StdEncoding.EncodeToString(m.Data)
	if m.IsImage() {
		return []any{inputText{"input_text", o.Text}, inputImage{"input_image", url}}
	}
	return []any{inputText{"input_text", o.Text}, inputFile{"input_file", m.Name, url}}
}

// runTool runs one of toolkit's tools on a JSON input, as toolkit mcp does.
func runTool(ctx context.Context, name string, args []byte, h cmdline.Host) outcome.Outcome {
	t, ok := applets.Find(name)
	if !ok {
		return outcome.Failure("no tool called %q; the tools are %s", name, strings.Join(applets.Names(), ", "))
	}
	if len(bytes.TrimSpace(args)) == 0 {
		args = []byte("{}")
	}
	return t.Call(ctx, args, h)
}

// marshal is v as a JSON input for an applet.
func marshal(v any) []byte {
	b, err := json.Marshal(v, json.Deterministic(true))
	if err != nil {
		panic(err) // maps of strings and numbers
	}
	return b
}

// reason words a JSON error without the library's prefix.
func reason(err error) string {
	if se, ok := errors.AsType[*jsontext.SyntacticError](err); ok {
		return fmt.Sprintf("%v at byte %d", se.Err, se.ByteOffset)
	}
	return err.Error()
}
