package input

import (
	"bytes"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Type is the JSON type a field takes.
type Type int

const (
	String Type = iota
	Integer
	Boolean
	StringMap // an object whose values are strings
	List      // an array of Elem
	Object    // an object of Fields
)

// Field describes one input field of an Args struct.
type Field struct {
	Name     string // its JSON name
	Flag     string // how person mode gives it: "--limit N", "PATH" (an argument), "stdin"
	Usage    string // what its flag does, for --help; default: the start of Desc
	Desc     string // what it is, for a model
	Type     Type
	Required bool
	NonEmpty bool
	NoNUL    bool
	EnvMap   bool
	IfMatch  bool // a sha256 prefix of 12 or more hex digits, or "absent"
	IsName   bool // a name: letters, digits, '_', '.' and '-', 1 to 64 of them, not starting with '.' or '-'
	Bytes    bool // a String held as []byte: a large text decoded with one copy
	Min      *int64
	OneOf    []string // the values a String may take, when they are few (check:"oneof=a b c")
	AnyCase  bool     // OneOf's values in any case (check:"anycase")

	Elem   *Field  // a List's elements
	Fields []Field // an Object's fields

	index []int
	ptr   bool // the Go field is a pointer: nil when the input leaves it out
}

// Index is the field's index sequence in its struct, for
// reflect.Value.FieldByIndex: a field of an embedded struct (the fields
// several applets share) is one of the struct's own.
func (f Field) Index() []int { return f.index }

// FlagName is how person mode names the field: "--limit", "PATH".
func (f Field) FlagName() string {
	name, _, _ := strings.Cut(strings.TrimSuffix(f.Flag, ",file"), " ")
	return strings.TrimSuffix(name, "...")
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
		if sf.Anonymous && name == "" && sf.Type.Kind() == reflect.Struct {
			for _, f := range Fields(sf.Type) {
				f.index = append([]int{i}, f.index...)
				fields = append(fields, f)
			}
			continue
		}
		if name == "" {
			panic(fmt.Sprintf("input: field %s.%s has no json name", t.Name(), sf.Name))
		}
		f := Field{Name: name, Flag: sf.Tag.Get("flag"), Usage: sf.Tag.Get("usage"), Desc: sf.Tag.Get("desc"), index: []int{i}}
		ft := sf.Type
		if ft.Kind() == reflect.Pointer {
			f.ptr = true
			ft = ft.Elem()
		}
		f.setType(ft, t, sf)
		for c := range strings.SplitSeq(sf.Tag.Get("check"), ",") {
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
			case c == "ifmatch":
				f.IfMatch = true
			case c == "name":
				f.IsName = true
			case c == "anycase":
				f.AnyCase = true
			case strings.HasPrefix(c, "oneof="):
				f.OneOf = strings.Fields(c[len("oneof="):])
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

func (f *Field) setType(ft, parent reflect.Type, sf reflect.StructField) {
	switch {
	case ft.Kind() == reflect.String:
		f.Type = String
	case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Uint8:
		f.Type, f.Bytes = String, true
	case ft.Kind() == reflect.Int:
		f.Type = Integer
	case ft.Kind() == reflect.Bool:
		f.Type = Boolean
	case ft.Kind() == reflect.Map && ft.Key().Kind() == reflect.String && ft.Elem().Kind() == reflect.String:
		f.Type = StringMap
	case ft.Kind() == reflect.Struct:
		f.Type = Object
		f.Fields = Fields(ft)
	case ft.Kind() == reflect.Slice:
		f.Type = List
		elem := &Field{Name: f.Name}
		elem.setType(ft.Elem(), parent, sf)
		if elem.Type == List {
			panic(fmt.Sprintf("input: field %s.%s: a list of lists", parent.Name(), sf.Name))
		}
		f.Elem = elem
	default:
		panic(fmt.Sprintf("input: field %s.%s has a type the decoder does not know: %s", parent.Name(), sf.Name, sf.Type))
	}
}

// Check applies the fields' checks to the Args that dst points to, however it
// was filled in (JSON, or flags in person mode). It returns a *FieldError.
func Check(dst any) error {
	rv := reflect.ValueOf(dst).Elem()
	return checkStruct(rv, Fields(rv.Type()), "")
}

func checkStruct(rv reflect.Value, fields []Field, path string) error {
	for _, f := range fields {
		fv := rv.FieldByIndex(f.index)
		if f.ptr {
			if fv.IsNil() {
				continue
			}
			fv = fv.Elem()
		}
		if err := checkValue(f, fv, join(path, f.Name)); err != nil {
			return err
		}
	}
	return nil
}

func checkValue(f Field, v reflect.Value, path string) error {
	switch f.Type {
	case Object:
		return checkStruct(v, f.Fields, path)
	case List:
		for i := range v.Len() {
			if err := checkValue(*f.Elem, v.Index(i), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
		return nil
	}
	if p := problem(f, v); p != "" {
		return &FieldError{Field: f, Path: path, Problem: p}
	}
	return nil
}

// problem is what is wrong with v, a value of the field f, or "".
func problem(f Field, v reflect.Value) string {
	switch f.Type {
	case String:
		if f.Bytes {
			switch {
			case f.NonEmpty && v.Len() == 0:
				return "must not be empty"
			case f.NoNUL && bytes.IndexByte(v.Bytes(), 0) >= 0:
				return "must not contain a NUL byte"
			}
			return ""
		}
		s := v.String()
		if f.NonEmpty && s == "" {
			return "must not be empty"
		}
		if f.NoNUL && strings.IndexByte(s, 0) >= 0 {
			return "must not contain a NUL byte"
		}
		if f.IfMatch && !IsIfMatch(s) {
			return fmt.Sprintf("must be a sha256 (12 to 64 hex digits) or \"absent\", not %q", s)
		}
		if len(f.OneOf) > 0 && !slices.ContainsFunc(f.OneOf, func(o string) bool { return o == s || f.AnyCase && strings.EqualFold(o, s) }) {
			return fmt.Sprintf("must be %s, not %q", orList(f.OneOf), s)
		}
		if f.IsName && !IsName(s) {
			return fmt.Sprintf("must be a name of 1 to 64 letters, digits, '_', '.' or '-', starting with a letter, digit or '_', not %q", s)
		}
	case Integer:
		if n := v.Int(); f.Min != nil && n < *f.Min {
			return fmt.Sprintf("must be at least %d, not %d", *f.Min, n)
		}
	case StringMap:
		for _, k := range sortedKeys(v) {
			key, val := k.String(), v.MapIndex(k).String()
			if f.EnvMap && (key == "" || strings.IndexByte(key, '=') >= 0) {
				return fmt.Sprintf("has a name that cannot be an environment variable: %q", key)
			}
			if f.NoNUL && (strings.IndexByte(key, 0) >= 0 || strings.IndexByte(val, 0) >= 0) {
				return fmt.Sprintf("must not contain a NUL byte (in %q)", key)
			}
			if f.IfMatch && !IsIfMatch(val) {
				return fmt.Sprintf("must map paths to a sha256 (12 to 64 hex digits) or \"absent\", not %q for %q", val, key)
			}
		}
	}
	return ""
}

// IsIfMatch reports whether s can be an if_match: "absent", or 12 to 64 hex
// digits (a prefix of a sha256).
func IsIfMatch(s string) bool {
	if s == "absent" {
		return true
	}
	if len(s) < 12 || len(s) > 64 {
		return false
	}
	for _, c := range []byte(s) {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// orList words values as "a, b or c".
func orList(values []string) string {
	if len(values) == 1 {
		return values[0]
	}
	return strings.Join(values[:len(values)-1], ", ") + " or " + values[len(values)-1]
}

// IsName reports whether s can be a name (a session's): 1 to 64 of
// letters, digits, '_', '.' and '-', the first not '.' or '-'.
func IsName(s string) bool {
	if len(s) < 1 || len(s) > 64 || s[0] == '.' || s[0] == '-' {
		return false
	}
	for _, c := range []byte(s) {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '_' || c == '.' || c == '-') {
			return false
		}
	}
	return true
}

func sortedKeys(m reflect.Value) []reflect.Value {
	keys := m.MapKeys()
	slices.SortFunc(keys, func(a, b reflect.Value) int { return strings.Compare(a.String(), b.String()) })
	return keys
}

// join names a member of the object at path: "env", "edits[1].old_text".
func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}
