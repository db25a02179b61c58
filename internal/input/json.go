package input

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// kind is the JSON type of a parsed value.
type kind int

const (
	kNull kind = iota
	kBool
	kNumber
	kString
	kArray
	kObject
)

func (k kind) String() string {
	return [...]string{"null", "a boolean", "a number", "a string", "an array", "an object"}[k]
}

// value is one parsed JSON value. Only the fields for its kind are set.
type value struct {
	kind    kind
	off     int // offset of the value's first byte in the input
	b       bool
	str     string // the decoded string, or the number's literal
	members []member
	elems   []value
}

type member struct {
	key    string
	keyOff int
	val    value
}

// maxDepth bounds nesting so that no input can exhaust the stack.
const maxDepth = 64

// syntaxError is invalid JSON at an offset.
type syntaxError struct {
	off int
	msg string
}

func (e *syntaxError) Error() string {
	return fmt.Sprintf("invalid JSON at offset %d: %s", e.off, e.msg)
}

// parse parses data as exactly one JSON value with nothing but white space
// around it. Invalid UTF-8 inside strings becomes U+FFFD, as encoding/json does.
// It changes data: strings are unescaped in place, and share its memory.
func parse(data []byte) (value, error) {
	p := parser{data: data}
	p.skipSpace()
	if p.pos == len(data) {
		return value{}, &syntaxError{off: p.pos, msg: "no JSON value"}
	}
	v, err := p.value(0)
	if err != nil {
		return value{}, err
	}
	p.skipSpace()
	if p.pos != len(data) {
		return value{}, &syntaxError{off: p.pos, msg: "unexpected data after the JSON value"}
	}
	return v, nil
}

type parser struct {
	data []byte
	pos  int
}

func (p *parser) fail(msg string) error {
	return &syntaxError{off: p.pos, msg: msg}
}

func (p *parser) skipSpace() {
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *parser) value(depth int) (value, error) {
	if p.pos >= len(p.data) {
		return value{}, p.fail("unexpected end of input")
	}
	off := p.pos
	switch c := p.data[p.pos]; {
	case c == '{':
		return p.object(depth)
	case c == '[':
		return p.array(depth)
	case c == '"':
		s, err := p.string()
		return value{kind: kString, off: off, str: s}, err
	case c == '-' || (c >= '0' && c <= '9'):
		lit, err := p.number()
		return value{kind: kNumber, off: off, str: lit}, err
	case c == 't':
		return value{kind: kBool, off: off, b: true}, p.literal("true")
	case c == 'f':
		return value{kind: kBool, off: off}, p.literal("false")
	case c == 'n':
		return value{kind: kNull, off: off}, p.literal("null")
	default:
		return value{}, p.fail(fmt.Sprintf("unexpected %s", describeByte(c)))
	}
}

func describeByte(c byte) string {
	if c >= 0x20 && c < 0x7f {
		return strconv.QuoteRune(rune(c))
	}
	return fmt.Sprintf("byte 0x%02x", c)
}

func (p *parser) literal(word string) error {
	if len(p.data)-p.pos >= len(word) && string(p.data[p.pos:p.pos+len(word)]) == word {
		p.pos += len(word)
		return nil
	}
	return p.fail("invalid literal (expected " + word + ")")
}

func (p *parser) object(depth int) (value, error) {
	v := value{kind: kObject, off: p.pos}
	if depth >= maxDepth {
		return v, p.fail("nested too deeply")
	}
	p.pos++ // {
	p.skipSpace()
	if p.pos < len(p.data) && p.data[p.pos] == '}' {
		p.pos++
		return v, nil
	}
	for {
		p.skipSpace()
		if p.pos >= len(p.data) {
			return v, p.fail("unexpected end of input in an object")
		}
		if p.data[p.pos] != '"' {
			return v, p.fail("expected a quoted field name")
		}
		keyOff := p.pos
		key, err := p.string()
		if err != nil {
			return v, err
		}
		p.skipSpace()
		if p.pos >= len(p.data) || p.data[p.pos] != ':' {
			return v, p.fail("expected ':' after a field name")
		}
		p.pos++
		p.skipSpace()
		val, err := p.value(depth + 1)
		if err != nil {
			return v, err
		}
		v.members = append(v.members, member{key: key, keyOff: keyOff, val: val})
		p.skipSpace()
		if p.pos >= len(p.data) {
			return v, p.fail("unexpected end of input in an object")
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
		case '}':
			p.pos++
			return v, nil
		default:
			return v, p.fail("expected ',' or '}' after a field")
		}
	}
}

func (p *parser) array(depth int) (value, error) {
	v := value{kind: kArray, off: p.pos}
	if depth >= maxDepth {
		return v, p.fail("nested too deeply")
	}
	p.pos++ // [
	p.skipSpace()
	if p.pos < len(p.data) && p.data[p.pos] == ']' {
		p.pos++
		return v, nil
	}
	for {
		p.skipSpace()
		e, err := p.value(depth + 1)
		if err != nil {
			return v, err
		}
		v.elems = append(v.elems, e)
		p.skipSpace()
		if p.pos >= len(p.data) {
			return v, p.fail("unexpected end of input in an array")
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
		case ']':
			p.pos++
			return v, nil
		default:
			return v, p.fail("expected ',' or ']' after an array element")
		}
	}
}

func (p *parser) number() (string, error) {
	start := p.pos
	d := p.data
	i := p.pos
	if i < len(d) && d[i] == '-' {
		i++
	}
	switch {
	case i < len(d) && d[i] == '0':
		i++
	case i < len(d) && d[i] >= '1' && d[i] <= '9':
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
	default:
		p.pos = i
		return "", p.fail("invalid number")
	}
	if i < len(d) && d[i] == '.' {
		i++
		if i >= len(d) || d[i] < '0' || d[i] > '9' {
			p.pos = i
			return "", p.fail("invalid number (no digit after '.')")
		}
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		if i >= len(d) || d[i] < '0' || d[i] > '9' {
			p.pos = i
			return "", p.fail("invalid number (no digit in the exponent)")
		}
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
	}
	p.pos = i
	return string(d[start:i]), nil
}

const (
	lo8 = 0x0101010101010101
	hi8 = 0x8080808080808080
)

// plainRun returns the length of the run at the start of b that holds no
// '"', no '\\' and no control byte, eight bytes at a time (this is where a
// 64 MiB "content" spends its time), and whether the run is all ASCII.
func plainRun(b []byte) (int, bool) {
	i := 0
	var high uint64
	for ; i+8 <= len(b); i += 8 {
		w := binary.LittleEndian.Uint64(b[i:])
		q := w ^ (lo8 * '"')
		s := w ^ (lo8 * '\\')
		if m := (((q - lo8) &^ q) | ((s - lo8) &^ s) | ((w - lo8*0x20) &^ w)) & hi8; m != 0 {
			// The lowest flagged byte is exact: count the bytes before it.
			k := bits.TrailingZeros64(m) >> 3
			return i + k, high|(w&(1<<(8*k)-1))&hi8 == 0
		}
		high |= w & hi8
	}
	for ; i < len(b); i++ {
		c := b[i]
		if c == '"' || c == '\\' || c < 0x20 {
			break
		}
		high |= uint64(c & 0x80)
	}
	return i, high == 0
}

// string parses a JSON string starting at the opening quote. The string it
// returns shares the input's memory: escapes are undone in place (the
// unescaped text is never longer), so a 64 MiB content is neither copied nor
// given new memory. Only a string with invalid UTF-8, where U+FFFD is
// longer than the byte it replaces, is built apart.
func (p *parser) string() (string, error) {
	p.pos++ // opening quote
	start := p.pos
	w := start // where the unescaped text goes
	d := p.data
	for {
		run, ascii := plainRun(d[p.pos:])
		if !ascii && !utf8.Valid(d[p.pos:p.pos+run]) {
			return p.stringApart(start, w)
		}
		if w != p.pos {
			copy(d[w:], d[p.pos:p.pos+run])
		}
		w += run
		p.pos += run
		if p.pos >= len(d) {
			return "", p.fail("unexpected end of input in a string")
		}
		switch c := d[p.pos]; {
		case c == '"':
			p.pos++
			return unsafe.String(unsafe.SliceData(d[start:]), w-start), nil
		case c < 0x20:
			return "", p.fail(fmt.Sprintf("control character 0x%02x in a string (it must be escaped)", c))
		}
		// A backslash. The common escapes here, the rest in escape.
		if p.pos+1 < len(d) {
			if b := simpleEscape[d[p.pos+1]]; b != 0 {
				d[w] = b
				w++
				p.pos += 2
				continue
			}
		}
		var esc [utf8.UTFMax]byte
		out, err := p.escape(esc[:0])
		if err != nil {
			return "", err
		}
		w += copy(d[w:], out)
	}
}

// simpleEscape maps the byte after a backslash to what it stands for, for
// the escapes of one byte; 0 for the others.
var simpleEscape = [256]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

// stringApart finishes a string that holds invalid UTF-8 in a buffer of its
// own: data[start:w] is what was unescaped so far, p.pos where to go on.
func (p *parser) stringApart(start, w int) (string, error) {
	buf := make([]byte, 0, (w-start)+stringSpan(p.data[p.pos:])+8)
	buf = append(buf, p.data[start:w]...)
	for {
		run, _ := plainRun(p.data[p.pos:])
		buf = appendValid(buf, p.data[p.pos:p.pos+run])
		p.pos += run
		if p.pos >= len(p.data) {
			return "", p.fail("unexpected end of input in a string")
		}
		switch c := p.data[p.pos]; {
		case c == '"':
			p.pos++
			return unsafe.String(unsafe.SliceData(buf), len(buf)), nil
		case c < 0x20:
			return "", p.fail(fmt.Sprintf("control character 0x%02x in a string (it must be escaped)", c))
		default:
			var err error
			if buf, err = p.escape(buf); err != nil {
				return "", err
			}
		}
	}
}

// stringSpan returns how many bytes of b (which follows an opening quote) come
// before the closing quote, or up to the first error.
func stringSpan(b []byte) int {
	i := 0
	for i < len(b) {
		n, _ := plainRun(b[i:])
		i += n
		if i >= len(b) || b[i] != '\\' {
			break
		}
		i += 2
	}
	return min(i, len(b))
}

// appendValid appends b, each byte of an invalid UTF-8 sequence becoming U+FFFD.
func appendValid(buf, b []byte) []byte {
	if utf8.Valid(b) {
		return append(buf, b...)
	}
	for len(b) > 0 {
		i := 0
		for i < len(b) && b[i] < utf8.RuneSelf {
			i++
		}
		buf = append(buf, b[:i]...)
		b = b[i:]
		if len(b) == 0 {
			break
		}
		r, size := utf8.DecodeRune(b)
		if r == utf8.RuneError && size == 1 {
			buf = append(buf, "\uFFFD"...)
		} else {
			buf = append(buf, b[:size]...)
		}
		b = b[size:]
	}
	return buf
}

func (p *parser) escape(buf []byte) ([]byte, error) {
	start := p.pos
	if p.pos+1 >= len(p.data) {
		return buf, p.fail("unexpected end of input in a string")
	}
	c := p.data[p.pos+1]
	p.pos += 2
	switch c {
	case '"', '\\', '/':
		return append(buf, c), nil
	case 'b':
		return append(buf, '\b'), nil
	case 'f':
		return append(buf, '\f'), nil
	case 'n':
		return append(buf, '\n'), nil
	case 'r':
		return append(buf, '\r'), nil
	case 't':
		return append(buf, '\t'), nil
	case 'u':
		r, ok := p.hex4()
		if !ok {
			p.pos = start
			return buf, p.fail(`invalid \u escape`)
		}
		if utf16.IsSurrogate(r) {
			// A high surrogate followed by a low one is one character;
			// anything else is invalid and becomes U+FFFD.
			save := p.pos
			if p.pos+1 < len(p.data) && p.data[p.pos] == '\\' && p.data[p.pos+1] == 'u' {
				p.pos += 2
				if r2, ok := p.hex4(); ok {
					if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
						return utf8.AppendRune(buf, d), nil
					}
				}
			}
			p.pos = save
			return append(buf, "\uFFFD"...), nil
		}
		return utf8.AppendRune(buf, r), nil
	}
	p.pos = start
	return buf, p.fail(fmt.Sprintf("invalid escape %s in a string", describeByte(c)))
}

func (p *parser) hex4() (rune, bool) {
	if p.pos+4 > len(p.data) {
		return 0, false
	}
	var r rune
	for _, c := range p.data[p.pos : p.pos+4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	p.pos += 4
	return r, true
}
