// Package schema prints the tools as hosts register them: each one's name,
// its description for the model and the JSON Schema of its input, in the
// shape an API takes.
//
//	toolkit schema [--format plain|anthropic|openai|mcp] [APPLET]
package schema

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"toolkit/applets"
	"toolkit/internal/cmdline"
	"toolkit/internal/input"
	"toolkit/internal/outcome"
)

// Formats are the shapes the tool list is printed in.
var Formats = []string{"plain", "anthropic", "openai", "mcp"}

// Describe returns a tool in the shape format asks for.
func Describe(t applets.Tool, format string) (any, error) {
	schema := input.Schema(t.Args)
	switch format {
	case "", "plain":
		return map[string]any{"name": t.Name, "description": t.Description, "input_schema": schema, "hints": t.Hints}, nil
	case "anthropic": // the Messages API's tools
		return map[string]any{"name": t.Name, "description": t.Description, "input_schema": schema}, nil
	case "openai": // Chat Completions' tools
		return map[string]any{"type": "function", "function": map[string]any{"name": t.Name, "description": t.Description, "parameters": schema}}, nil
	case "mcp": // tools/list's tools
		return map[string]any{"name": t.Name, "description": t.Description, "inputSchema": schema, "annotations": map[string]any{
			"readOnlyHint": t.Hints.ReadOnly, "idempotentHint": t.Hints.Idempotent,
			"destructiveHint": t.Hints.Destructive, "openWorldHint": t.Hints.OpenWorld,
		}}, nil
	}
	return nil, fmt.Errorf("no format called %q; the formats are %s", format, strings.Join(Formats, ", "))
}

// Usage is schema's usage line.
const Usage = "toolkit schema [--format plain|anthropic|openai|mcp] [APPLET]"

// Command prints the tools' schemas: all of them as a JSON list, or the one
// named.
func Command() *cli.Command {
	return &cli.Command{
		Name:         "schema",
		Usage:        "print the tools' names, descriptions and input schemas, as JSON",
		UsageText:    Usage,
		Flags:        []cli.Flag{&cli.StringFlag{Name: "format", Value: "plain", Usage: "the shape: " + strings.Join(Formats, ", ")}},
		OnUsageError: cmdline.UsageError(Usage),
		Action: func(c *cli.Context) error {
			out, err := describe(c.String("format"), c.Args().Slice())
			if err != nil {
				o := outcome.Misuse("%s", err)
				o.Usage = Usage
				return cmdline.Exit(c, o, outcome.TextMode)
			}
			return cmdline.Exit(c, outcome.Success(string(outcome.Marshal(out))+"\n", nil), outcome.TextMode)
		},
	}
}

func describe(format string, names []string) (any, error) {
	switch len(names) {
	case 0:
		var list []any
		for _, t := range applets.All() {
			d, err := Describe(t, format)
			if err != nil {
				return nil, err
			}
			list = append(list, d)
		}
		return list, nil
	case 1:
		t, ok := applets.Find(names[0])
		if !ok {
			return nil, fmt.Errorf("no tool called %q; the tools are %s", names[0], strings.Join(applets.Names(), ", "))
		}
		return Describe(t, format)
	}
	return nil, fmt.Errorf("one APPLET at most, not %d", len(names))
}
