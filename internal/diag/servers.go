package diag

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"toolkit/internal/proc"
)

// Spec is a language server toolkit may keep: what it is called, how it
// is started, the files it checks and how its project's root is found.
type Spec struct {
	Name string `json:"name"`
	// Commands are the ways to start it, the first found used: on PATH,
	// or in the project's own bins (node_modules/.bin, .venv/bin).
	Commands [][]string `json:"commands"`
	Exts     []string   `json:"exts"`
	// Roots are groups of marker files, tried in order: the project's
	// root is the nearest directory holding one of a group's, never above
	// --root; Topmost takes the farthest instead (a Cargo workspace).
	Roots   [][]string `json:"roots"`
	Topmost bool       `json:"topmost,omitempty"`
	// Settle is how long a publish is waited on for another of the same
	// version (lsp.Server.Settle).
	Settle time.Duration `json:"settle,omitempty"`
	// Options, where set, are its initializationOptions for a project at
	// root (never above top).
	Options func(root, top string) map[string]any `json:"-"`
}

// Servers are the language servers toolkit knows, before the host's
// --lsp.
var Servers = []Spec{
	{Name: "gopls", Commands: [][]string{{"gopls"}}, Exts: []string{".go"}, Roots: [][]string{{"go.work"}, {"go.mod"}}},
	{Name: "pyright", Commands: [][]string{{"basedpyright-langserver", "--stdio"}, {"pyright-langserver", "--stdio"}}, Exts: []string{".py", ".pyi"},
		Roots: [][]string{{"pyproject.toml", "pyrightconfig.json", "setup.cfg", "setup.py"}}},
	{Name: "typescript-language-server", Commands: [][]string{{"typescript-language-server", "--stdio"}},
		Exts: []string{".ts", ".tsx", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs"}, Roots: [][]string{{"tsconfig.json", "jsconfig.json"}, {"package.json"}},
		Options: tsserver},
	{Name: "rust-analyzer", Commands: [][]string{{"rust-analyzer"}}, Exts: []string{".rs"}, Roots: [][]string{{"Cargo.toml"}}, Topmost: true},
	{Name: "clangd", Commands: [][]string{{"clangd"}}, Exts: []string{".c", ".h", ".cc", ".cpp", ".cxx", ".hpp", ".hh"},
		Roots: [][]string{{"compile_commands.json", "compile_flags.txt"}}},
}

// languageID is the LSP language of a file name's extension.
func languageID(ext string) string {
	switch ext {
	case ".go":
		return "go"
	case ".py", ".pyi":
		return "python"
	case ".ts", ".mts", ".cts":
		return "typescript"
	case ".tsx":
		return "typescriptreact"
	case ".js", ".mjs", ".cjs":
		return "javascript"
	case ".jsx":
		return "javascriptreact"
	case ".rs":
		return "rust"
	case ".c", ".h":
		return "c"
	case ".cc", ".cpp", ".cxx", ".hpp", ".hh":
		return "cpp"
	}
	return strings.TrimPrefix(ext, ".")
}

// ParseLSP is the servers a host's --lsp adds or replaces, each
// NAME=COMMAND:EXTS:MARKERS, several apart by ";": "kotlin=kotlin-lsp
// --stdio:.kt,.kts:settings.gradle.kts,build.gradle.kts".
func ParseLSP(s string) ([]Spec, error) {
	var out []Spec
	for entry := range strings.SplitSeq(s, ";") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		name, rest, ok := strings.Cut(entry, "=")
		parts := strings.Split(rest, ":")
		if !ok || name == "" || len(parts) != 3 || strings.TrimSpace(parts[0]) == "" || parts[1] == "" {
			return nil, &lspError{entry}
		}
		sp := Spec{Name: name, Commands: [][]string{strings.Fields(parts[0])}}
		for e := range strings.SplitSeq(parts[1], ",") {
			if e = strings.TrimSpace(e); e != "" {
				sp.Exts = append(sp.Exts, "."+strings.TrimPrefix(e, "."))
			}
		}
		var markers []string
		for m := range strings.SplitSeq(parts[2], ",") {
			if m = strings.TrimSpace(m); m != "" {
				markers = append(markers, m)
			}
		}
		if len(markers) > 0 {
			sp.Roots = [][]string{markers}
		}
		out = append(out, sp)
	}
	return out, nil
}

type lspError struct{ entry string }

func (e *lspError) Error() string {
	return "--lsp " + e.entry + ": not NAME=COMMAND:EXTS:MARKERS"
}

// serverFor is the spec of the server for the file named path, the host's
// first, and the command that starts it; nil where there is none on PATH
// or in the project's bins.
func serverFor(path string, specs []Spec, top string) (*Spec, string, []string) {
	ext := strings.ToLower(filepath.Ext(path))
	for i := range specs {
		sp := &specs[i]
		if !slices.Contains(sp.Exts, ext) {
			continue
		}
		root := projectRoot(filepath.Dir(path), sp, top)
		for _, argv := range sp.Commands {
			if exe := lookFor(argv[0], root, top); exe != "" {
				return sp, root, append([]string{exe}, argv[1:]...)
			}
		}
	}
	return nil, "", nil
}

// projectRoot is the root of the project dir is in, for sp: the nearest
// directory holding one of the first group of markers found, never above
// top; dir itself where none is.
func projectRoot(dir string, sp *Spec, top string) string {
	for _, group := range sp.Roots {
		found := ""
		for d := dir; ; d = filepath.Dir(d) {
			for _, m := range group {
				if _, err := os.Stat(filepath.Join(d, m)); err == nil {
					found = d
					break
				}
			}
			if found != "" && !sp.Topmost || d == top || filepath.Dir(d) == d {
				break
			}
		}
		if found != "" {
			return found
		}
	}
	return dir
}

// lookFor finds a server's program: in the project's own bins (from root
// up to top), then on PATH.
func lookFor(name, root, top string) string {
	if strings.Contains(name, "/") {
		return name
	}
	for d := root; ; d = filepath.Dir(d) {
		for _, bin := range []string{"node_modules/.bin", ".venv/bin", "venv/bin"} {
			p := filepath.Join(d, bin, name)
			if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
				return p
			}
		}
		if d == top || filepath.Dir(d) == d {
			break
		}
	}
	return proc.Which(name)
}

// tsserver is typescript-language-server's options: the tsserver of the
// project's own typescript, else of the one whose tsc is on PATH (the
// server looks only in the project, and would not start).
func tsserver(root, top string) map[string]any {
	for d := root; ; d = filepath.Dir(d) {
		if p := filepath.Join(d, "node_modules", "typescript", "lib", "tsserver.js"); exists(p) {
			return nil // the server finds it itself
		}
		if d == top || filepath.Dir(d) == d {
			break
		}
	}
	tsc := proc.Which("tsc")
	if tsc == "" {
		return nil
	}
	if real, err := filepath.EvalSymlinks(tsc); err == nil {
		tsc = real
	}
	if p := filepath.Join(filepath.Dir(tsc), "..", "lib", "tsserver.js"); exists(p) {
		return map[string]any{"tsserver": map[string]any{"path": filepath.Clean(p)}}
	}
	return nil
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
