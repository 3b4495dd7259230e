package data

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"strings"

	"holdgo/internal/atomicfile"
	"holdgo/internal/budget"
)

// The .npy format (numpy.lib.format): the magic "\x93NUMPY", a major and a
// minor version byte, the header length (uint16 little-endian in v1.0,
// uint32 in v2.0 and v3.0), and an ASCII (v3.0: UTF-8) Python dict literal
// such as
//
//	{'descr': '<f4', 'fortran_order': False, 'shape': (3, 2), }
//
// padded with spaces and ended by '\n' so that the data starts at a multiple
// of 64 bytes. The data follows in C (row-major) order.

const npyMagic = "\x93NUMPY"

// npyAlign is the alignment numpy (≥ 1.14) gives the start of the data.
const npyAlign = 64

// ErrNPY is wrapped by every error about the content of a .npy file (as
// opposed to errors opening or reading it).
var ErrNPY = errors.New("malformed or unsupported .npy")

// Dtype is an element type a .npy file may hold.
type Dtype int

const (
	Float32 Dtype = iota + 1 // numpy '<f4'
	Float64                  // numpy '<f8'
)

func (d Dtype) String() string {
	switch d {
	case Float32:
		return "float32"
	case Float64:
		return "float64"
	}
	return "Dtype(" + strconv.Itoa(int(d)) + ")"
}

func (d Dtype) size() int {
	if d == Float32 {
		return 4
	}
	return 8
}

func (d Dtype) descr() string {
	if d == Float32 {
		return "<f4"
	}
	return "<f8"
}

// Array is the content of a .npy file: values in row-major order, their
// shape ((n,) or (n, d)) and the file's element type. Values are held as
// float64 whatever the file's type, so a float32 file round-trips exactly.
type Array struct {
	Shape []int
	Dtype Dtype
	Data  []float64
}

// Rows is the first dimension: the number of points.
func (a *Array) Rows() int { return a.Shape[0] }

// Cols is the number of values per point: 1 for a shape (n,), d for (n, d).
func (a *Array) Cols() int {
	if len(a.Shape) == 1 {
		return 1
	}
	return a.Shape[1]
}

// Float32 returns the values converted to float32.
func (a *Array) Float32() []float32 {
	out := make([]float32, len(a.Data))
	for i, v := range a.Data {
		out[i] = float32(v)
	}
	return out
}

// ReadNPY reads a .npy file of version 1.0, 2.0 or 3.0 holding
// little-endian float32 or float64 values in C order with shape (n,) or
// (n, d). Errors name the file.
func ReadNPY(path string) (*Array, error) {
	b, err := budget.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read npy: %w", err)
	}
	a, err := DecodeNPY(b)
	if err != nil {
		return nil, fmt.Errorf("read npy %s: %w", path, err)
	}
	return a, nil
}

// DecodeNPY decodes the bytes of a .npy file (see ReadNPY). Bytes after the
// data are an error: they mean the header's shape does not describe the
// file.
func DecodeNPY(b []byte) (*Array, error) {
	if len(b) < len(npyMagic)+2 || string(b[:len(npyMagic)]) != npyMagic {
		return nil, fmt.Errorf("%w: not a .npy file (no \\x93NUMPY magic)", ErrNPY)
	}
	major, minor := b[6], b[7]
	var hlen, off int
	switch major {
	case 1:
		if len(b) < 10 {
			return nil, fmt.Errorf("%w: truncated before the header length", ErrNPY)
		}
		hlen, off = int(binary.LittleEndian.Uint16(b[8:])), 10
	case 2, 3:
		if len(b) < 12 {
			return nil, fmt.Errorf("%w: truncated before the header length", ErrNPY)
		}
		h := binary.LittleEndian.Uint32(b[8:])
		if uint64(h) > uint64(len(b)) {
			return nil, fmt.Errorf("%w: truncated header: %d bytes declared, %d in the file", ErrNPY, h, len(b)-12)
		}
		hlen, off = int(h), 12
	default:
		return nil, fmt.Errorf("%w: format version %d.%d (want 1.0, 2.0 or 3.0)", ErrNPY, major, minor)
	}
	if minor != 0 {
		return nil, fmt.Errorf("%w: format version %d.%d (want 1.0, 2.0 or 3.0)", ErrNPY, major, minor)
	}
	if len(b)-off < hlen {
		return nil, fmt.Errorf("%w: truncated header: %d bytes declared, %d in the file", ErrNPY, hlen, len(b)-off)
	}
	dtype, shape, err := parseHeader(string(b[off : off+hlen]))
	if err != nil {
		return nil, err
	}
	body := b[off+hlen:]
	count := 1
	for _, s := range shape {
		if s != 0 && count > math.MaxInt32/s {
			return nil, fmt.Errorf("%w: shape %v holds more than %d values (the cap of 2³¹−1)", ErrNPY, shape, math.MaxInt32)
		}
		count *= s
	}
	if err := budget.CheckCount(int64(count), 8, fmt.Sprintf("a .npy array of shape %v", shape)); err != nil {
		return nil, err
	}
	want := count * dtype.size()
	switch {
	case len(body) < want:
		return nil, fmt.Errorf("%w: truncated data: shape %v of %s needs %d bytes, the file has %d",
			ErrNPY, shape, dtype, want, len(body))
	case len(body) > want:
		return nil, fmt.Errorf("%w: %d bytes after the data of shape %v of %s", ErrNPY, len(body)-want, shape, dtype)
	}
	data := make([]float64, count)
	if dtype == Float32 {
		for i := range data {
			data[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(body[4*i:])))
		}
	} else {
		for i := range data {
			data[i] = math.Float64frombits(binary.LittleEndian.Uint64(body[8*i:]))
		}
	}
	return &Array{Shape: shape, Dtype: dtype, Data: data}, nil
}

// parseHeader reads the header dict. It accepts the keys in any order and
// the spacing Python's repr and hand-written files use.
func parseHeader(h string) (Dtype, []int, error) {
	h = strings.TrimRight(h, " \n\x00")
	p := &pyParser{s: h}
	fields, err := p.dict()
	if err != nil {
		return 0, nil, fmt.Errorf("%w: header %q: %v", ErrNPY, h, err)
	}
	descr, ok := fields["descr"].(string)
	if !ok {
		return 0, nil, fmt.Errorf("%w: header %q has no string 'descr'", ErrNPY, h)
	}
	fortran, ok := fields["fortran_order"].(bool)
	if !ok {
		return 0, nil, fmt.Errorf("%w: header %q has no boolean 'fortran_order'", ErrNPY, h)
	}
	shape, ok := fields["shape"].([]int)
	if !ok {
		return 0, nil, fmt.Errorf("%w: header %q has no integer tuple 'shape'", ErrNPY, h)
	}
	var dtype Dtype
	switch descr {
	case "<f4":
		dtype = Float32
	case "<f8":
		dtype = Float64
	case ">f4", ">f8":
		return 0, nil, fmt.Errorf("%w: dtype '%s' is big-endian (want little-endian '<f4' or '<f8')", ErrNPY, descr)
	default:
		return 0, nil, fmt.Errorf("%w: dtype '%s' (want float32 '<f4' or float64 '<f8')", ErrNPY, descr)
	}
	if fortran && len(shape) > 1 {
		return 0, nil, fmt.Errorf("%w: Fortran (column-major) order; save the array C-contiguous (numpy.ascontiguousarray)", ErrNPY)
	}
	if len(shape) != 1 && len(shape) != 2 {
		return 0, nil, fmt.Errorf("%w: shape %v (want (n,) or (n, d))", ErrNPY, shape)
	}
	return dtype, shape, nil
}

// pyParser parses the small subset of Python literals a .npy header uses:
// a dict of string keys to strings, True/False and tuples of integers.
type pyParser struct {
	s   string
	pos int
}

func (p *pyParser) space() {
	for p.pos < len(p.s) && (p.s[p.pos] == ' ' || p.s[p.pos] == '\t' || p.s[p.pos] == '\n') {
		p.pos++
	}
}

func (p *pyParser) eat(c byte) bool {
	p.space()
	if p.pos < len(p.s) && p.s[p.pos] == c {
		p.pos++
		return true
	}
	return false
}

func (p *pyParser) dict() (map[string]any, error) {
	if !p.eat('{') {
		return nil, errors.New("not a dict")
	}
	out := map[string]any{}
	for {
		if p.eat('}') {
			break
		}
		key, err := p.str()
		if err != nil {
			return nil, err
		}
		if !p.eat(':') {
			return nil, fmt.Errorf("no ':' after key %q", key)
		}
		val, err := p.value()
		if err != nil {
			return nil, fmt.Errorf("key %q: %v", key, err)
		}
		if _, dup := out[key]; dup {
			return nil, fmt.Errorf("key %q appears twice", key)
		}
		out[key] = val
		if p.eat(',') {
			continue
		}
		if !p.eat('}') {
			return nil, errors.New("no ',' or '}' after a value")
		}
		break
	}
	p.space()
	if p.pos != len(p.s) {
		return nil, fmt.Errorf("text after the dict: %q", p.s[p.pos:])
	}
	return out, nil
}

func (p *pyParser) str() (string, error) {
	p.space()
	if p.pos >= len(p.s) || (p.s[p.pos] != '\'' && p.s[p.pos] != '"') {
		return "", errors.New("want a quoted string")
	}
	q := p.s[p.pos]
	end := strings.IndexByte(p.s[p.pos+1:], q)
	if end < 0 {
		return "", errors.New("unterminated string")
	}
	v := p.s[p.pos+1 : p.pos+1+end]
	p.pos += end + 2
	return v, nil
}

func (p *pyParser) value() (any, error) {
	p.space()
	rest := p.s[p.pos:]
	switch {
	case strings.HasPrefix(rest, "True"):
		p.pos += 4
		return true, nil
	case strings.HasPrefix(rest, "False"):
		p.pos += 5
		return false, nil
	case strings.HasPrefix(rest, "("):
		return p.tuple()
	case strings.HasPrefix(rest, "'"), strings.HasPrefix(rest, "\""):
		return p.str()
	}
	return nil, errors.New("want a string, True, False or a tuple")
}

func (p *pyParser) tuple() ([]int, error) {
	p.eat('(')
	out := []int{}
	for {
		if p.eat(')') {
			return out, nil
		}
		p.space()
		// The dimension's token runs to the next separator, so that an error names all of it
		// ("-2", "2.5", "1e3", an overflowing run of digits), not the digits before a sign.
		start := p.pos
		for p.pos < len(p.s) && !strings.ContainsRune(", \t\n)", rune(p.s[p.pos])) {
			p.pos++
		}
		token := p.s[start:p.pos]
		digits := strings.TrimSuffix(token, "L") // Python 2 era writers append L to longs
		n, err := strconv.Atoi(digits)
		magnitude := strings.TrimPrefix(digits, "-")
		switch {
		case token == "":
			return nil, errors.New("empty dimension in shape")
		case magnitude == "" || strings.Trim(magnitude, "0123456789") != "":
			return nil, fmt.Errorf("bad dimension %q in shape (want a non-negative integer)", token)
		case magnitude != digits && strings.Trim(magnitude, "0") != "":
			return nil, fmt.Errorf("negative dimension %s in shape", token)
		case err != nil:
			return nil, fmt.Errorf("dimension %s in shape is beyond any array (at most %d)", token, math.MaxInt)
		}
		out = append(out, n)
		if p.eat(',') {
			continue
		}
		if !p.eat(')') {
			return nil, fmt.Errorf("no ',' or ')' after dimension %s in shape", token)
		}
		return out, nil
	}
}

// WriteNPY32 writes data with shape (n,) or (n, d) as a float32 .npy file.
func WriteNPY32(path string, data []float32, shape ...int) error {
	return writeNPY(path, Float32, len(data), shape, func(body []byte) {
		for i, v := range data {
			binary.LittleEndian.PutUint32(body[4*i:], math.Float32bits(v))
		}
	})
}

// WriteNPY64 writes data with shape (n,) or (n, d) as a float64 .npy file.
func WriteNPY64(path string, data []float64, shape ...int) error {
	return writeNPY(path, Float64, len(data), shape, func(body []byte) {
		for i, v := range data {
			binary.LittleEndian.PutUint64(body[8*i:], math.Float64bits(v))
		}
	})
}

// writeNPY writes a version 1.0 file (2.0 if the header would not fit a
// uint16, as numpy does), atomically: a temporary file in the same
// directory, fsynced and renamed over path. A failed write leaves a file
// already at path as it was.
func writeNPY(path string, dtype Dtype, n int, shape []int, fill func(body []byte)) error {
	count := 1
	for _, s := range shape {
		if s < 0 {
			return fmt.Errorf("write npy %s: negative dimension in shape %v", path, shape)
		}
		count *= s
	}
	if len(shape) != 1 && len(shape) != 2 {
		return fmt.Errorf("write npy %s: shape %v (want (n,) or (n, d))", path, shape)
	}
	if count != n {
		return fmt.Errorf("write npy %s: shape %v holds %d values, data has %d", path, shape, count, n)
	}
	header := encodeHeader(dtype, shape)
	body := make([]byte, n*dtype.size())
	fill(body)
	return writeFileAtomic(path, func(w io.Writer) error {
		if _, err := w.Write(header); err != nil {
			return err
		}
		_, err := w.Write(body)
		return err
	})
}

// encodeHeader returns magic, version, length and dict exactly as numpy
// (≥ 1.23) writes them: the dict, spare spaces so the first dimension can
// grow to 21 digits in place, then spaces and '\n' to a total length that
// is a multiple of 64 (numpy's _wrap_header, which adds a full 64 when the
// length is already a multiple).
func encodeHeader(dtype Dtype, shape []int) []byte {
	var sh strings.Builder
	sh.WriteByte('(')
	for i, s := range shape {
		if i > 0 {
			sh.WriteString(", ")
		}
		sh.WriteString(strconv.Itoa(s))
	}
	if len(shape) == 1 {
		sh.WriteByte(',')
	}
	sh.WriteByte(')')
	dict := fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': %s, }", dtype.descr(), sh.String())
	const growthDigits = 21
	dict += strings.Repeat(" ", max(0, growthDigits-len(strconv.Itoa(shape[0]))))
	build := func(version byte, lenBytes int) []byte {
		pre := len(npyMagic) + 2 + lenBytes
		pad := npyAlign - (pre+len(dict)+1)%npyAlign
		hlen := len(dict) + pad + 1
		var buf bytes.Buffer
		buf.WriteString(npyMagic)
		buf.Write([]byte{version, 0})
		if lenBytes == 2 {
			binary.Write(&buf, binary.LittleEndian, uint16(hlen))
		} else {
			binary.Write(&buf, binary.LittleEndian, uint32(hlen))
		}
		buf.WriteString(dict)
		buf.WriteString(strings.Repeat(" ", pad))
		buf.WriteByte('\n')
		return buf.Bytes()
	}
	if len(dict)+1+npyAlign <= math.MaxUint16 {
		return build(1, 2)
	}
	return build(2, 4)
}

// writeFileAtomic writes path atomically (package atomicfile).
func writeFileAtomic(path string, write func(io.Writer) error) error {
	if err := atomicfile.Write(path, write); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// StreamNPY32 writes a float32 .npy file of shape (n,) or (n, d) whose
// values produce hands over in order, block by block, through emit — so a
// file of any size is written in the memory of one block. Like WriteNPY32
// it writes atomically: a failed or short produce leaves path as it was.
func StreamNPY32(path string, shape []int, produce func(emit func(values []float32) error) error) error {
	if len(shape) != 1 && len(shape) != 2 {
		return fmt.Errorf("write npy %s: shape %v (want (n,) or (n, d))", path, shape)
	}
	count := uint64(1)
	for _, s := range shape {
		if s < 0 {
			return fmt.Errorf("write npy %s: negative dimension in shape %v", path, shape)
		}
		hi, lo := bits.Mul64(count, uint64(s))
		if hi != 0 || lo > math.MaxInt64/4 {
			return fmt.Errorf("write npy %s: shape %v is too large for a file", path, shape)
		}
		count = lo
	}
	return writeFileAtomic(path, func(w io.Writer) error {
		bw := bufio.NewWriterSize(w, 1<<20)
		if _, err := bw.Write(encodeHeader(Float32, shape)); err != nil {
			return err
		}
		var written uint64
		var buf []byte
		emit := func(values []float32) error {
			if written+uint64(len(values)) > count {
				return fmt.Errorf("more than the %d values of shape %v", count, shape)
			}
			buf = slices.Grow(buf[:0], 4*len(values))[:4*len(values)]
			for i, v := range values {
				binary.LittleEndian.PutUint32(buf[4*i:], math.Float32bits(v))
			}
			written += uint64(len(values))
			_, err := bw.Write(buf)
			return err
		}
		if err := produce(emit); err != nil {
			return err
		}
		if written != count {
			return fmt.Errorf("%d values for shape %v, which holds %d", written, shape, count)
		}
		return bw.Flush()
	})
}
