// Package deps links every package outside the standard library that
// toolkit's own packages import (deps_test.go keeps the list whole): a
// program that imports it starts as toolkit would with its dependencies
// and none of its own code. bench/startup/deps and bench/floor/grep (built
// with the tag deps) are the floors that set.
package deps

import (
	_ "github.com/bmatcuk/doublestar/v4"
	_ "github.com/creack/pty"
	_ "github.com/go-json-experiment/json"
	_ "github.com/go-json-experiment/json/jsontext"
	_ "github.com/google/jsonschema-go/jsonschema"
	_ "github.com/landlock-lsm/go-landlock/landlock"
	_ "github.com/landlock-lsm/go-landlock/landlock/syscall"
	_ "github.com/modelcontextprotocol/go-sdk/jsonrpc"
	_ "github.com/modelcontextprotocol/go-sdk/mcp"
	_ "github.com/sourcegraph/jsonrpc2"
	_ "github.com/urfave/cli/v2"
	_ "golang.org/x/sys/unix"
	_ "golang.org/x/text/encoding"
	_ "golang.org/x/text/encoding/unicode"
	_ "golang.org/x/text/encoding/unicode/utf32"
)
