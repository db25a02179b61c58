package walk

import (
	"slices"
	"sync"

	"github.com/bmatcuk/doublestar/v4"
)

// Types are the file types grep's type takes, with the names their files
// have: those of ripgrep's default type table for the languages and
// formats models search most (rg --type-list).
// The table is made when first asked for, not as every toolkit starts.
var Types = sync.OnceValue(func() map[string][]string {
	return map[string][]string{
		"c":        {"*.[chH]", "*.[chH].in", "*.cats"},
		"cpp":      {"*.[ChH]", "*.cc", "*.[ch]pp", "*.[ch]xx", "*.hh", "*.inl", "*.[ChH].in", "*.cc.in", "*.[ch]pp.in", "*.[ch]xx.in", "*.hh.in"},
		"cs":       {"*.cs"},
		"css":      {"*.css", "*.scss"},
		"dart":     {"*.dart"},
		"docker":   {"*Dockerfile*"},
		"elixir":   {"*.ex", "*.eex", "*.exs"},
		"go":       {"*.go"},
		"h":        {"*.h", "*.hh", "*.hpp"},
		"haskell":  {"*.hs", "*.lhs", "*.cpphs", "*.c2hs", "*.hsc"},
		"html":     {"*.htm", "*.html", "*.ejs"},
		"java":     {"*.java", "*.jsp", "*.jspx", "*.properties"},
		"js":       {"*.js", "*.jsx", "*.vue", "*.cjs", "*.mjs"},
		"json":     {"*.json", "composer.lock"},
		"kotlin":   {"*.kt", "*.kts"},
		"lua":      {"*.lua"},
		"make":     {"[Gg][Nn][Uu]makefile", "[Mm]akefile", "[Gg][Nn][Uu]makefile.am", "[Mm]akefile.am", "[Gg][Nn][Uu]makefile.in", "[Mm]akefile.in", "*.mk", "*.mak"},
		"markdown": {"*.markdown", "*.md", "*.mdown", "*.mdwn", "*.mkd", "*.mkdn"},
		"md":       {"*.markdown", "*.md", "*.mdown", "*.mdwn", "*.mkd", "*.mkdn"},
		"php":      {"*.php", "*.php3", "*.php4", "*.php5", "*.php7", "*.php8", "*.pht", "*.phtml"},
		"protobuf": {"*.proto"},
		"py":       {"*.py"},
		"ruby":     {"config.ru", "Gemfile", ".irbrc", "Rakefile", "*.gemspec", "*.rb", "*.rbw"},
		"rust":     {"*.rs"},
		"scala":    {"*.scala", "*.sbt"},
		"sh":       {"*.bash", "*.csh", "*.ksh", "*.sh", "*.tcsh", "*.zsh", ".bashrc", "*.bashrc", ".profile", ".zshrc"},
		"sql":      {"*.sql", "*.psql"},
		"swift":    {"*.swift"},
		"toml":     {"*.toml", "Cargo.lock"},
		"ts":       {"*.ts", "*.tsx", "*.cts", "*.mts"},
		"txt":      {"*.txt"},
		"xml":      {"*.xml", "*.xml.dist", "*.dtd", "*.xsl", "*.xslt", "*.xsd", "*.xjb", "*.rng", "*.sch", "*.xhtml"},
		"yaml":     {"*.yaml", "*.yml"},
		"zig":      {"*.zig"},
	}
})

// OfType reports whether a file called name is of the type t (a key of
// Types), by the matcher of every other glob.
func OfType(t, name string) bool {
	return slices.ContainsFunc(Types()[t], func(glob string) bool { return doublestar.MatchUnvalidated(glob, name) })
}
