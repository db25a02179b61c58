// Package input decodes a tool call's input, strictly.
//
// An applet's Args is a struct whose fields say how they are given:
//
//	Path  string `json:"path" flag:"PATH" check:"required,nonempty,nonul" desc:"…"`
//	Limit *int   `json:"limit" flag:"--limit" check:"min=1" desc:"…"`
//
// json names the field of the JSON object, flag how person mode names it, desc
// describes it for a model, and check lists what must hold: required (the
// field must be given), nonempty, nonul (no NUL byte in a string or in a map's
// keys and values), envmap (a map's keys are environment variable names) and
// min=N for integers. Fields tagged json:"-" are host settings, not input.
//
// Decode turns JSON into such a struct and refuses anything else with an error
// that names the field or the byte offset: invalid JSON, trailing data, an
// unknown field (with a did-you-mean), a field given twice, a wrong type, a
// missing required field, a value out of range. A JSON null is the same as
// leaving an optional field out. The JSON Schema of the same struct comes from
// Fields, so the decoder and the schema a host registers cannot disagree.
package input

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// MaxSize is the largest input accepted: 64 MiB.
const MaxSize = 64 << 20

// Read reads a whole input from r, refusing more than MaxSize bytes.
//
// The bytes go to memory mapped for them at once (see buffer): on the
// virtual machines toolkit was measured on, faulting in a 64 MiB input page
// by page cost 200 ms, mapping it populated 9 ms.
func Read(r io.Reader) ([]byte, error) {
	size := int64(-1)
	if f, ok := r.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
			size = fi.Size()
		}
	}
	if size > MaxSize {
		return nil, errTooLarge
	}
	buf := newBuffer(size)
	for {
		if len(buf.b) == cap(buf.b) {
			if !buf.grow() {
				return nil, errTooLarge
			}
		}
		// A block at a time: one read of 64 MiB took ten times as long
		// as 64 KiB reads of the same file here.
		n, err := r.Read(buf.b[len(buf.b):min(cap(buf.b), len(buf.b)+readBlock)])
		buf.b = buf.b[:len(buf.b)+n]
		if err == io.EOF {
			return buf.b, nil
		}
		if err != nil {
			return nil, fmt.Errorf("input: cannot read: %v", err)
		}
	}
}

var errTooLarge = errors.New("input: larger than 64 MiB")

const readBlock = 64 << 10

// Type is the JSON type a field takes.
type Type int

const (
	String Type = iota
	Integer
	Boolean
	StringMap // an object whose values are strings
)

// Field describes one input field of an Args struct.
type Field struct {
	Name     string // its JSON name
	Flag     string // its name in person mode: "--limit", or "PATH" for an argument
	Desc     string
	Type     Type
	Required bool
	NonEmpty bool
	NoNUL    bool
	EnvMap   bool
	Min      *int64

	index int
	ptr   bool // the Go field is a pointer: nil when the input leaves it out
}

var fieldCache sync.Map // reflect.Type → []Field

// Fields lists the input fields of the struct type t (or a pointer to it), in
// the order they are declared. It panics on a field type it cannot decode:
// that is a programming error found by the first test that touches the type.
func Fields(t reflect.Type) []Field {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if f, ok := fieldCache.Load(t); ok {
		return f.([]Field)
	}
	var fields []Field
	for i := range t.NumField() {
		sf := t.Field(i)
		name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
		if name == "-" || !sf.IsExported() {
			continue
		}
		if name == "" {
			panic(fmt.Sprintf("input: field %s.%s has no json name", t.Name(), sf.Name))
		}
		f := Field{Name: name, Flag: sf.Tag.Get("flag"), Desc: sf.Tag.Get("desc"), index: i}
		ft := sf.Type
		if ft.Kind() == reflect.Pointer {
			f.ptr = true
			ft = ft.Elem()
		}
		switch {
		case ft.Kind() == reflect.String:
			f.Type = String
		case ft.Kind() == reflect.Int:
			f.Type = Integer
		case ft.Kind() == reflect.Bool:
			f.Type = Boolean
		case ft.Kind() == reflect.Map && ft.Key().Kind() == reflect.String && ft.Elem().Kind() == reflect.String:
			f.Type = StringMap
		default:
			panic(fmt.Sprintf("input: field %s.%s has a type the decoder does not know: %s", t.Name(), sf.Name, sf.Type))
		}
		for _, c := range strings.Split(sf.Tag.Get("check"), ",") {
			switch {
			case c == "":
			case c == "required":
				f.Required = true
			case c == "nonempty":
				f.NonEmpty = true
			case c == "nonul":
				f.NoNUL = true
			case c == "envmap":
				f.EnvMap = true
			case strings.HasPrefix(c, "min="):
				n, err := strconv.ParseInt(c[len("min="):], 10, 64)
				if err != nil {
					panic(fmt.Sprintf("input: field %s.%s: bad check %q", t.Name(), sf.Name, c))
				}
				f.Min = &n
			default:
				panic(fmt.Sprintf("input: field %s.%s: unknown check %q", t.Name(), sf.Name, c))
			}
		}
		fields = append(fields, f)
	}
	fieldCache.Store(t, fields)
	return fields
}

// FieldError is a value that breaks a field's checks.
type FieldError struct {
	Field   Field
	Problem string // "must be at least 1, not 0"
}

func (e *FieldError) Error() string { return strconv.Quote(e.Field.Name) + " " + e.Problem }

// PersonError words e for person mode, naming the flag or argument.
func (e *FieldError) PersonError() string {
	name := e.Field.Flag
	if name == "" {
		name = e.Field.Name
	}
	return name + " " + e.Problem
}

// Decode decodes data, one JSON object, into dst, a pointer to an Args struct.
// Every error begins with "input: ". Decode takes data over: it unescapes
// strings in place, and the strings in dst share data's memory.
func Decode(data []byte, dst any) error {
	if err := decode(data, dst); err != nil {
		return fmt.Errorf("input: %w", err)
	}
	return nil
}

func decode(data []byte, dst any) error {
	rv := reflect.ValueOf(dst)
	if rv.Kind() != reflect.Pointer || rv.Elem().Kind() != reflect.Struct {
		panic("input: Decode needs a pointer to a struct")
	}
	if isSpace(data) {
		return errors.New("empty; expected a JSON object")
	}
	v, err := parse(data)
	if err != nil {
		return err
	}
	if v.kind != kObject {
		return fmt.Errorf("expected a JSON object, not %s", v.kind)
	}
	fields := Fields(rv.Type())
	byName := make(map[string]*Field, len(fields))
	for i := range fields {
		byName[fields[i].Name] = &fields[i]
	}
	seen := make(map[string]bool, len(v.members))
	st := rv.Elem()
	for _, m := range v.members {
		f := byName[m.key]
		if f == nil {
			return unknownField(m.key, fields)
		}
		if seen[m.key] {
			return fmt.Errorf("field %q given twice (at offset %d)", m.key, m.keyOff)
		}
		seen[m.key] = true
		if m.val.kind == kNull && !f.Required {
			continue
		}
		if err := assign(st.Field(f.index), f, m.val); err != nil {
			return err
		}
	}
	for _, f := range fields {
		if f.Required && !seen[f.Name] {
			return fmt.Errorf("missing required field %q", f.Name)
		}
	}
	return Check(dst)
}

func isSpace(data []byte) bool {
	for _, c := range data {
		if c != ' ' && c != '\t' && c != '\r' && c != '\n' {
			return false
		}
	}
	return true
}

func unknownField(name string, fields []Field) error {
	names := make([]string, len(fields))
	for i, f := range fields {
		names[i] = f.Name
	}
	if s := Suggest(name, names); s != "" {
		return fmt.Errorf("unknown field %q (did you mean %q?)", name, s)
	}
	sort.Strings(names)
	return fmt.Errorf("unknown field %q; the fields are %s", name, strings.Join(names, ", "))
}

func typeName(t Type) string {
	return [...]string{"a string", "an integer", "a boolean", "an object of strings"}[t]
}

func wrongType(f *Field, v value) error {
	return &FieldError{Field: *f, Problem: fmt.Sprintf("must be %s, not %s", typeName(f.Type), v.kind)}
}

func assign(dst reflect.Value, f *Field, v value) error {
	var val reflect.Value
	switch f.Type {
	case String:
		if v.kind != kString {
			return wrongType(f, v)
		}
		val = reflect.ValueOf(v.str)
	case Boolean:
		if v.kind != kBool {
			return wrongType(f, v)
		}
		val = reflect.ValueOf(v.b)
	case Integer:
		if v.kind != kNumber {
			return wrongType(f, v)
		}
		n, err := integer(v.str)
		if err != nil {
			return &FieldError{Field: *f, Problem: err.Error()}
		}
		val = reflect.ValueOf(n)
	case StringMap:
		if v.kind != kObject {
			return wrongType(f, v)
		}
		m := make(map[string]string, len(v.members))
		for _, e := range v.members {
			if e.val.kind != kString {
				return &FieldError{Field: *f, Problem: fmt.Sprintf("must map names to strings, but %q is %s", e.key, e.val.kind)}
			}
			if _, dup := m[e.key]; dup {
				return &FieldError{Field: *f, Problem: fmt.Sprintf("names %q twice", e.key)}
			}
			m[e.key] = e.val.str
		}
		val = reflect.ValueOf(m)
	}
	if f.ptr {
		p := reflect.New(val.Type())
		p.Elem().Set(val)
		val = p
	}
	dst.Set(val)
	return nil
}

// integer converts a JSON number literal to an int. 30, 30.0 and 3e1 are all
// 30; 1.5 and 1e400 are refused.
func integer(lit string) (int, error) {
	if !strings.ContainsAny(lit, ".eE") {
		n, err := strconv.ParseInt(lit, 10, 64)
		if err != nil || n > math.MaxInt || n < math.MinInt {
			return 0, fmt.Errorf("is out of range: %s", lit)
		}
		return int(n), nil
	}
	x, err := strconv.ParseFloat(lit, 64)
	if err != nil {
		return 0, fmt.Errorf("is out of range: %s", lit)
	}
	if x != math.Trunc(x) {
		return 0, fmt.Errorf("must be a whole number, not %s", lit)
	}
	if x >= 1<<53 || x <= -(1<<53) {
		return 0, fmt.Errorf("is out of range: %s", lit)
	}
	return int(x), nil
}

// Check applies the fields' checks to the Args that dst points to, however it
// was filled in (JSON, or flags in person mode). It returns a *FieldError.
func Check(dst any) error {
	rv := reflect.ValueOf(dst).Elem()
	for _, f := range Fields(rv.Type()) {
		fv := rv.Field(f.index)
		if f.ptr {
			if fv.IsNil() {
				continue
			}
			fv = fv.Elem()
		}
		if p := problem(f, fv); p != "" {
			return &FieldError{Field: f, Problem: p}
		}
	}
	return nil
}

func problem(f Field, v reflect.Value) string {
	switch f.Type {
	case String:
		s := v.String()
		if f.NonEmpty && s == "" {
			return "must not be empty"
		}
		if f.NoNUL && strings.IndexByte(s, 0) >= 0 {
			return "must not contain a NUL byte"
		}
	case Integer:
		if n := v.Int(); f.Min != nil && n < *f.Min {
			return fmt.Sprintf("must be at least %d, not %d", *f.Min, n)
		}
	case StringMap:
		keys := v.MapKeys()
		sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
		for _, k := range keys {
			key, val := k.String(), v.MapIndex(k).String()
			if f.EnvMap && (key == "" || strings.IndexByte(key, '=') >= 0) {
				return fmt.Sprintf("has a name that cannot be an environment variable: %q", key)
			}
			if f.NoNUL && (strings.IndexByte(key, 0) >= 0 || strings.IndexByte(val, 0) >= 0) {
				return fmt.Sprintf("must not contain a NUL byte (in %q)", key)
			}
		}
	}
	return ""
}
