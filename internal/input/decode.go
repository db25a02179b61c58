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
// keys and values), envmap (a map's keys are environment variable names),
// ifmatch (a sha256 prefix or "absent") and min=N for integers. Fields tagged
// json:"-" are host settings, not input. A field may also be a struct or a
// slice of structs or strings, described the same way.
//
// Decode turns JSON into such a struct and refuses anything else with an error
// that names the field or the byte offset: invalid JSON, trailing data, an
// unknown field (with a did-you-mean), a field given twice, a wrong type, a
// missing required field, a value out of range. A JSON null is the same as
// leaving an optional field out, and invalid UTF-8 in a string becomes
// U+FFFD. The JSON itself is read by github.com/go-json-experiment/json (the
// code that becomes encoding/json/v2); what each field takes comes from Fields,
// which the JSON Schema a host registers is made from too, so the two cannot
// disagree.
package input

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
)

// MaxSize is the largest input accepted: 64 MiB.
const MaxSize = 64 << 20

var errTooLarge = errors.New("input: larger than 64 MiB")

// Read reads a whole input from r, refusing more than MaxSize bytes.
func Read(r io.Reader) ([]byte, error) { return readAtMost(r, MaxSize) }

// readAtMost reads a whole input from r, refusing more than limit bytes
// (MaxSize; less in a short test).
func readAtMost(r io.Reader, limit int64) ([]byte, error) {
	var buf bytes.Buffer
	if f, ok := r.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
			if fi.Size() > limit {
				return nil, errTooLarge
			}
			// bytes.Buffer.ReadFrom grows by a doubling when fewer than
			// bytes.MinRead bytes are free: room for that, and one more byte
			// to see the end, so that it never does.
			buf.Grow(int(fi.Size()) + bytes.MinRead + 1)
		}
	}
	if _, err := buf.ReadFrom(io.LimitReader(r, limit+1)); err != nil {
		return nil, fmt.Errorf("input: cannot read: %v", err)
	}
	if int64(buf.Len()) > limit {
		return nil, errTooLarge
	}
	return buf.Bytes(), nil
}

// FieldError is a value that breaks a field's checks.
type FieldError struct {
	Field   Field
	Path    string // "timeout_secs", "edits[1].old_text"
	Problem string // "must be at least 1, not 0"
}

func (e *FieldError) Error() string { return strconv.Quote(e.Path) + " " + e.Problem }

// PersonError words e for person mode, naming the flag or argument.
func (e *FieldError) PersonError() string {
	name := e.Field.FlagName()
	if name == "" || strings.Contains(e.Path, ".") || strings.Contains(e.Path, "[") {
		name = e.Path
	}
	return name + " " + e.Problem
}

// textOptions: invalid UTF-8 in a string becomes U+FFFD, as models and
// encoding/json have always had it.
var textOptions = jsontext.AllowInvalidUTF8(true)

// Decode decodes data, one JSON object, into dst, a pointer to an Args struct.
// Every error begins with "input: ".
func Decode(data []byte, dst any) error {
	rv := reflect.ValueOf(dst)
	if rv.Kind() != reflect.Pointer || rv.Elem().Kind() != reflect.Struct {
		panic("input: Decode needs a pointer to a struct")
	}
	if err := decode(data, rv.Elem()); err != nil {
		return fmt.Errorf("input: %w", err)
	}
	return nil
}

func decode(data []byte, st reflect.Value) error {
	start := skipSpace(data, 0)
	if start == len(data) {
		return errors.New("empty; expected a JSON object")
	}
	// The whole input is read once as JSON first, so that invalid JSON is
	// said as such wherever it is, before anything is said of the fields.
	dec := jsontext.NewDecoder(bytes.NewBuffer(data), textOptions)
	v, err := dec.ReadValue()
	if err != nil {
		return syntaxError(err)
	}
	end := skipSpace(data, int(dec.InputOffset()))
	if end < len(data) {
		return fmt.Errorf("invalid JSON at offset %d: unexpected data after the JSON value", end)
	}
	if v.Kind() != '{' {
		return fmt.Errorf("expected a JSON object, not %s", kindName(v.Kind()))
	}
	fields := Fields(st.Type())
	if err := decodeObject(v, st, fields, ""); err != nil {
		return err
	}
	return checkStruct(st, fields, "")
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// syntaxError words the JSON reader's error: where it is, and what.
func syntaxError(err error) error {
	var se *jsontext.SyntacticError
	if !errors.As(err, &se) {
		if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
			return errors.New("invalid JSON: unexpected end of input")
		}
		return fmt.Errorf("invalid JSON: %v", err)
	}
	if se.Err == jsontext.ErrDuplicateName {
		tokens := strings.Split(string(se.JSONPointer), "/")[1:]
		for i, t := range tokens {
			tokens[i] = strings.NewReplacer("~1", "/", "~0", "~").Replace(t)
		}
		if len(tokens) == 1 {
			return fmt.Errorf("field %q given twice (at offset %d)", tokens[0], se.ByteOffset)
		}
		return fmt.Errorf("%q names %q twice (at offset %d)", strings.Join(tokens[:len(tokens)-1], "."), tokens[len(tokens)-1], se.ByteOffset)
	}
	return fmt.Errorf("invalid JSON at offset %d: %s", se.ByteOffset, reasonOf(se.Err))
}

// reasonOf is the reader's reason in toolkit's words where they differ.
func reasonOf(err error) string {
	msg := strings.TrimPrefix(err.Error(), "jsontext: ")
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return "unexpected end of input"
	}
	const control = " in string (expecting non-control character)"
	if c, ok := strings.CutSuffix(msg, control); ok {
		if r, err := strconv.Unquote(strings.TrimPrefix(c, "invalid character ")); err == nil && len(r) == 1 {
			return fmt.Sprintf("control character 0x%02x in a string (it must be escaped)", r[0])
		}
	}
	return msg
}

func kindName(k jsontext.Kind) string {
	switch k {
	case 'n':
		return "null"
	case 't', 'f':
		return "a boolean"
	case '"':
		return "a string"
	case '0':
		return "a number"
	case '[':
		return "an array"
	}
	return "an object"
}

// decodeObject decodes v, a valid JSON object, into the struct st.
func decodeObject(v jsontext.Value, st reflect.Value, fields []Field, path string) error {
	dec := jsontext.NewDecoder(bytes.NewBuffer(v), textOptions)
	if _, err := dec.ReadToken(); err != nil { // {
		return syntaxError(err)
	}
	seen := make(map[string]bool, len(fields))
	for dec.PeekKind() != '}' {
		tok, err := dec.ReadToken()
		if err != nil {
			return syntaxError(err)
		}
		name := tok.String()
		val, err := dec.ReadValue()
		if err != nil {
			return syntaxError(err)
		}
		f := find(fields, name)
		if f == nil {
			return unknownField(join(path, name), name, fields)
		}
		seen[name] = true
		if val.Kind() == 'n' && !f.Required {
			continue
		}
		if err := assign(st.FieldByIndex(f.index), f, val, join(path, name)); err != nil {
			return err
		}
	}
	for _, f := range fields {
		if f.Required && !seen[f.Name] {
			return fmt.Errorf("missing required field %q", join(path, f.Name))
		}
	}
	return nil
}

func find(fields []Field, name string) *Field {
	for i := range fields {
		if fields[i].Name == name {
			return &fields[i]
		}
	}
	return nil
}

func unknownField(path, name string, fields []Field) error {
	names := make([]string, len(fields))
	for i, f := range fields {
		names[i] = f.Name
	}
	if s := Suggest(name, names); s != "" {
		return fmt.Errorf("unknown field %q (did you mean %q?)", path, s)
	}
	sort.Strings(names)
	return fmt.Errorf("unknown field %q; the fields are %s", path, strings.Join(names, ", "))
}

func typeName(f *Field) string {
	switch f.Type {
	case String:
		return "a string"
	case Integer:
		return "an integer"
	case Boolean:
		return "a boolean"
	case StringMap:
		return "an object of strings"
	case List:
		return "an array"
	}
	return "an object"
}

// assign decodes val, a valid JSON value, into dst as the field f says.
func assign(dst reflect.Value, f *Field, val jsontext.Value, path string) error {
	wrongType := func() error {
		return &FieldError{Field: *f, Path: path, Problem: fmt.Sprintf("must be %s, not %s", typeName(f), kindName(val.Kind()))}
	}
	if f.ptr {
		p := reflect.New(dst.Type().Elem())
		dst.Set(p)
		dst = p.Elem()
	}
	switch k := val.Kind(); f.Type {
	case String:
		if k != '"' {
			return wrongType()
		}
		if f.Bytes {
			dst.SetBytes(unquote(val))
		} else {
			dst.SetString(string(unquote(val)))
		}
	case Boolean:
		if k != 't' && k != 'f' {
			return wrongType()
		}
		dst.SetBool(k == 't')
	case Integer:
		if k != '0' {
			return wrongType()
		}
		n, err := integer(string(val))
		if err != nil {
			return &FieldError{Field: *f, Path: path, Problem: err.Error()}
		}
		dst.SetInt(int64(n))
	case StringMap:
		if k != '{' {
			return wrongType()
		}
		return decodeMap(val, dst, f, path)
	case Object:
		if k != '{' {
			return wrongType()
		}
		return decodeObject(val, dst, f.Fields, path)
	case List:
		if k != '[' {
			return wrongType()
		}
		return decodeList(val, dst, f, path)
	}
	return nil
}

func decodeMap(v jsontext.Value, dst reflect.Value, f *Field, path string) error {
	dec := jsontext.NewDecoder(bytes.NewBuffer(v), textOptions)
	_, _ = dec.ReadToken() // {
	m := reflect.MakeMap(dst.Type())
	for dec.PeekKind() != '}' {
		tok, err := dec.ReadToken()
		if err != nil {
			return syntaxError(err)
		}
		name := tok.String()
		val, err := dec.ReadValue()
		if err != nil {
			return syntaxError(err)
		}
		if val.Kind() != '"' {
			return &FieldError{Field: *f, Path: path, Problem: fmt.Sprintf("must map names to strings, but %q is %s", name, kindName(val.Kind()))}
		}
		m.SetMapIndex(reflect.ValueOf(name), reflect.ValueOf(string(unquote(val))))
	}
	dst.Set(m)
	return nil
}

func decodeList(v jsontext.Value, dst reflect.Value, f *Field, path string) error {
	dec := jsontext.NewDecoder(bytes.NewBuffer(v), textOptions)
	_, _ = dec.ReadToken() // [
	list := reflect.MakeSlice(dst.Type(), 0, 4)
	for i := 0; dec.PeekKind() != ']'; i++ {
		val, err := dec.ReadValue()
		if err != nil {
			return syntaxError(err)
		}
		elem := reflect.New(dst.Type().Elem()).Elem()
		elemPath := fmt.Sprintf("%s[%d]", path, i)
		if val.Kind() == 'n' {
			return &FieldError{Field: *f.Elem, Path: elemPath, Problem: "must be " + typeName(f.Elem) + ", not null"}
		}
		if err := assign(elem, f.Elem, val, elemPath); err != nil {
			return err
		}
		list = reflect.Append(list, elem)
	}
	dst.Set(list)
	return nil
}

// unquote decodes val, a valid JSON string, into memory of its own as large
// as val (it is never longer, but for U+FFFD in place of invalid UTF-8): a
// 64 MiB content is copied once. The one error the decoding can give here
// is for invalid UTF-8, which it has replaced.
func unquote(val jsontext.Value) []byte {
	b, _ := jsontext.AppendUnquote(make([]byte, 0, len(val)), val)
	return b
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
