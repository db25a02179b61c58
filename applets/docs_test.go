package applets

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// mdLink is a markdown link's target: [text](target).
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// slug is a heading's anchor as GitHub makes it.
func slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// anchors are the anchors of a markdown file's headings.
func anchors(t *testing.T, path string) map[string]bool {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for line := range strings.Lines(string(b)) {
		if h, ok := strings.CutPrefix(line, "#"); ok {
			out[slug(strings.TrimLeft(h, "#"))] = true
		}
	}
	return out
}

// TestDocsLinks: every link of the README and of docs/ to a file of the
// repository points to one that is there, and to a heading that is in it.
func TestDocsLinks(t *testing.T) {
	pages, _ := filepath.Glob("../docs/*.md")
	pages = append(pages, "../README.md")
	for _, page := range pages {
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range mdLink.FindAllStringSubmatch(string(b), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, anchor, _ := strings.Cut(target, "#")
			path := page
			if file != "" {
				path = filepath.Join(filepath.Dir(page), file)
			}
			if _, err := os.Stat(path); err != nil {
				t.Errorf("%s: a link to %s, which is not there", page, target)
				continue
			}
			if anchor != "" && strings.HasSuffix(path, ".md") && !anchors(t, path)[anchor] {
				t.Errorf("%s: a link to %s, whose heading is not there", page, target)
			}
		}
	}
}

// fieldNames are the JSON names of a type's fields, and of the fields of
// the structs it holds.
func fieldNames(t reflect.Type, out map[string]bool) {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return
	}
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if name != "" {
			out[name] = true
		}
		fieldNames(f.Type, out)
	}
}

// TestContractNamesEveryField: every field of every applet's input is in
// docs/contract.md, where a host looks it up.
func TestContractNamesEveryField(t *testing.T) {
	b, err := os.ReadFile("../docs/contract.md")
	if err != nil {
		t.Fatal(err)
	}
	contract := string(b)
	for _, tool := range All() {
		names := map[string]bool{}
		fieldNames(tool.Args, names)
		for name := range names {
			if !strings.Contains(contract, "`"+name+"`") {
				t.Errorf("%s's field %s is not in docs/contract.md", tool.Name, name)
			}
		}
	}
}
