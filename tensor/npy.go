package tensor

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"
)

// The .npy format (https://numpy.org/doc/stable/reference/generated/numpy.lib.format.html):
//
//	"\x93NUMPY" major minor HEADER_LEN HEADER DATA
//
// HEADER_LEN is a little-endian uint16 in version 1.0 and uint32 in 2.0 and
// 3.0; HEADER is a Python dict literal (latin-1 in 1.0/2.0, UTF-8 in 3.0)
// with keys 'descr', 'fortran_order' and 'shape', padded with spaces and a
// final newline so that DATA starts on a 64-byte boundary.
//
// We decode it ourselves rather than with codeberg.org/sbinet/npyio v0.14.0:
// that library rejects format 3.0, panics on malformed headers (a header
// without a newline, or keys in another order: slice bounds out of range),
// and decodes element by element through reflection at ~305 MB/s where a
// copy runs at ~2.7 GB/s on this machine; it also has no bfloat16.

const npyMagic = "\x93NUMPY"

// ErrNpy marks every error about malformed or mismatched .npy/.npz content
// (errors.Is(err, ErrNpy)); I/O errors from the underlying reader are
// wrapped as they are.
var ErrNpy = errors.New("npy")

// npyErrorf formats a content error wrapping ErrNpy.
func npyErrorf(format string, args ...any) error {
	return &npyError{msg: fmt.Sprintf(format, args...)}
}

type npyError struct{ msg string }

func (e *npyError) Error() string        { return e.msg }
func (e *npyError) Is(target error) bool { return target == ErrNpy }

// MaxNpyHeader bounds the header length we accept. NumPy's own reader
// refuses headers over 10000 bytes by default (max_header_size); we allow
// more, but not gigabytes of dict.
const MaxNpyHeader = 1 << 20

// maxNpyDims is NumPy's NPY_MAXDIMS (64 since NumPy 2.0).
const maxNpyDims = 64

// NpyHeader is the decoded header of a .npy file.
type NpyHeader struct {
	Major, Minor int
	DType        DType
	Descr        string // the 'descr' string as written, e.g. "<f4"
	BigEndian    bool   // data is big-endian (only meaningful for multi-byte dtypes)
	Fortran      bool   // data is in Fortran (column-major) order
	Shape        []int64
	DataOffset   int64 // bytes before the data (magic + version + length + header)
}

// NBytes is the size in bytes of the data the header describes.
func (h *NpyHeader) NBytes() int64 {
	n, _ := byteSize(h.DType, h.Shape)
	return n
}

// ReadNpyHeader reads the magic string, version and header dict of a .npy
// stream, leaving r at the first data byte.
func ReadNpyHeader(r io.Reader) (*NpyHeader, error) {
	var pre [10]byte
	if n, err := io.ReadFull(r, pre[:8]); err != nil {
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return nil, npyErrorf("not a .npy file: %d bytes, shorter than the 8-byte magic and version", n)
		}
		return nil, err
	}
	if string(pre[:6]) != npyMagic {
		return nil, npyErrorf("not a .npy file: starts with %q, want the magic string %q", pre[:6], npyMagic)
	}
	h := &NpyHeader{Major: int(pre[6]), Minor: int(pre[7])}
	var hlen int64
	switch h.Major {
	case 1:
		if _, err := io.ReadFull(r, pre[8:10]); err != nil {
			return nil, truncated("header length", err)
		}
		hlen = int64(binary.LittleEndian.Uint16(pre[8:10]))
		h.DataOffset = 10 + hlen
	case 2, 3:
		var l [4]byte
		if _, err := io.ReadFull(r, l[:]); err != nil {
			return nil, truncated("header length", err)
		}
		hlen = int64(binary.LittleEndian.Uint32(l[:]))
		h.DataOffset = 12 + hlen
	default:
		return nil, npyErrorf("unsupported .npy format version %d.%d (want 1.0, 2.0 or 3.0)", h.Major, h.Minor)
	}
	if h.Minor != 0 {
		return nil, npyErrorf("unsupported .npy format version %d.%d (want 1.0, 2.0 or 3.0)", h.Major, h.Minor)
	}
	if hlen > MaxNpyHeader {
		return nil, npyErrorf("header length %d exceeds the limit of %d bytes", hlen, MaxNpyHeader)
	}
	buf := make([]byte, hlen)
	if n, err := io.ReadFull(r, buf); err != nil {
		return nil, truncated(fmt.Sprintf("header (%d of %d bytes)", n, hlen), err)
	}
	if err := h.parseDict(buf); err != nil {
		return nil, err
	}
	return h, nil
}

func truncated(what string, err error) error {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return npyErrorf("truncated .npy file: ends inside the %s", what)
	}
	return err
}

// parseDict parses the header dict literal. NumPy reads it with
// ast.literal_eval; we accept the subset any writer produces: string keys,
// string/bool/int-tuple values, either quote style, optional trailing
// commas, arbitrary whitespace, keys in any order.
func (h *NpyHeader) parseDict(buf []byte) error {
	// Versions 1.0 and 2.0 are latin-1, where every byte is a character;
	// non-ASCII ones can only sit inside strings and make an unknown descr.
	if h.Major >= 3 && !utf8.Valid(buf) {
		return npyErrorf("format 3.0 header is not valid UTF-8")
	}
	p := dictParser{buf: buf}
	seen := map[string]bool{}
	p.skipSpace()
	if err := p.expect('{'); err != nil {
		return err
	}
	for {
		p.skipSpace()
		if p.peek() == '}' {
			p.pos++
			break
		}
		keyPos := p.pos
		key, err := p.str()
		if err != nil {
			return err
		}
		p.skipSpace()
		if err := p.expect(':'); err != nil {
			return err
		}
		p.skipSpace()
		if seen[key] {
			return p.errorf(keyPos, "duplicate key %q", key)
		}
		seen[key] = true
		switch key {
		case "descr":
			if p.peek() == '[' {
				return p.errorf(p.pos, "structured dtypes (a list 'descr') are not supported: a tensor has one scalar element type")
			}
			at := p.pos
			d, err := p.str()
			if err != nil {
				return err
			}
			h.Descr = d
			if h.DType, h.BigEndian, err = parseDescr(d); err != nil {
				return p.errorf(at, "%v", err)
			}
		case "fortran_order":
			switch {
			case p.word("True"):
				h.Fortran = true
			case p.word("False"):
				h.Fortran = false
			default:
				return p.errorf(p.pos, "'fortran_order' must be True or False")
			}
		case "shape":
			if h.Shape, err = p.shape(); err != nil {
				return err
			}
		default:
			return p.errorf(keyPos, "unexpected key %q (want 'descr', 'fortran_order', 'shape')", key)
		}
		p.skipSpace()
		if p.peek() == ',' {
			p.pos++
			continue
		}
		p.skipSpace()
		if p.peek() != '}' {
			return p.errorf(p.pos, "expected ',' or '}' after the value of %q", key)
		}
	}
	p.skipSpace()
	if p.pos != len(buf) {
		return p.errorf(p.pos, "unexpected %q after the header dict", buf[p.pos:min(len(buf), p.pos+10)])
	}
	for _, k := range []string{"descr", "fortran_order", "shape"} {
		if !seen[k] {
			return npyErrorf("header lacks the key %q", k)
		}
	}
	if _, err := byteSize(h.DType, h.Shape); err != nil {
		return npyErrorf("header shape %s: %v", FormatShape(h.Shape), err)
	}
	return nil
}

type dictParser struct {
	buf []byte
	pos int
}

func (p *dictParser) errorf(pos int, format string, args ...any) error {
	return npyErrorf("header byte %d: %s (header %q)", pos, fmt.Sprintf(format, args...), shorten(p.buf))
}

func shorten(b []byte) string {
	b = bytes.TrimRight(b, " \n")
	if len(b) > 120 {
		return string(b[:117]) + "..."
	}
	return string(b)
}

func (p *dictParser) peek() byte {
	if p.pos < len(p.buf) {
		return p.buf[p.pos]
	}
	return 0
}

func (p *dictParser) skipSpace() {
	for p.pos < len(p.buf) && strings.IndexByte(" \t\r\n", p.buf[p.pos]) >= 0 {
		p.pos++
	}
}

func (p *dictParser) expect(c byte) error {
	if p.peek() != c {
		if p.pos >= len(p.buf) {
			return p.errorf(p.pos, "expected %q, found the end of the header", c)
		}
		return p.errorf(p.pos, "expected %q, found %q", c, p.buf[p.pos])
	}
	p.pos++
	return nil
}

func (p *dictParser) word(w string) bool {
	if bytes.HasPrefix(p.buf[p.pos:], []byte(w)) {
		p.pos += len(w)
		return true
	}
	return false
}

// str parses a quoted string without escapes (descr strings and keys
// never need them).
func (p *dictParser) str() (string, error) {
	q := p.peek()
	if q != '\'' && q != '"' {
		return "", p.errorf(p.pos, "expected a quoted string")
	}
	end := bytes.IndexByte(p.buf[p.pos+1:], q)
	if end < 0 {
		return "", p.errorf(p.pos, "unterminated string")
	}
	s := string(p.buf[p.pos+1 : p.pos+1+end])
	if strings.IndexByte(s, '\\') >= 0 {
		return "", p.errorf(p.pos, "escapes in strings are not supported")
	}
	p.pos += end + 2
	return s, nil
}

// shape parses a tuple of non-negative integers: (), (3,), (2, 3), (2, 3,).
// Python 2 long literals (3L) are accepted, as NumPy's reader does.
func (p *dictParser) shape() ([]int64, error) {
	if err := p.expect('('); err != nil {
		return nil, err
	}
	shape := []int64{}
	for {
		p.skipSpace()
		if p.peek() == ')' {
			p.pos++
			if len(shape) == 1 && !p.sawComma() {
				// "(3)" is the int 3 in Python, not a tuple.
				return nil, p.errorf(p.pos-1, "shape must be a tuple; a one-element tuple is written (n,)")
			}
			return shape, nil
		}
		start := p.pos
		for p.pos < len(p.buf) && p.buf[p.pos] >= '0' && p.buf[p.pos] <= '9' {
			p.pos++
		}
		if start == p.pos {
			return nil, p.errorf(p.pos, "expected a non-negative integer dimension or ')' in 'shape'")
		}
		d, err := strconv.ParseInt(string(p.buf[start:p.pos]), 10, 64)
		if err != nil {
			return nil, p.errorf(start, "dimension %s out of range", p.buf[start:p.pos])
		}
		if p.peek() == 'L' {
			p.pos++
		}
		shape = append(shape, d)
		if len(shape) > maxNpyDims {
			return nil, p.errorf(start, "more than %d dimensions", maxNpyDims)
		}
		p.skipSpace()
		switch p.peek() {
		case ',':
			p.pos++
		case ')':
		default:
			return nil, p.errorf(p.pos, "expected ',' or ')' in 'shape'")
		}
	}
}

// sawComma reports whether the ')' just consumed was preceded (ignoring
// spaces) by a comma.
func (p *dictParser) sawComma() bool {
	i := p.pos - 2
	for i >= 0 && strings.IndexByte(" \t\r\n", p.buf[i]) >= 0 {
		i--
	}
	return i >= 0 && p.buf[i] == ','
}

// parseDescr maps a NumPy type string ("<f4", "|b1", ">i8", ...) to a dtype
// and its byte order.
func parseDescr(s string) (DType, bool, error) {
	if s == "bfloat16" {
		// What np.dtype('bfloat16') names once ml_dtypes is imported.
		return BFloat16, false, nil
	}
	if len(s) < 3 {
		return Invalid, false, fmt.Errorf("unsupported dtype descr %q", s)
	}
	order, kind, size := s[0], s[1], s[2:]
	big := false
	switch order {
	case '<', '|':
	case '=':
		big = hostBigEndian
	case '>':
		big = true
	default:
		return Invalid, false, fmt.Errorf("unsupported dtype descr %q: byte order must be '<', '>', '=' or '|'", s)
	}
	var dt DType
	switch kind {
	case 'b':
		if size == "1" {
			dt = Bool
		}
	case 'i':
		dt = map[string]DType{"1": Int8, "2": Int16, "4": Int32, "8": Int64}[size]
	case 'u':
		dt = map[string]DType{"1": Uint8, "2": Uint16, "4": Uint32, "8": Uint64}[size]
	case 'f':
		dt = map[string]DType{"2": Float16, "4": Float32, "8": Float64}[size]
	case 'V':
		// NumPy has no bfloat16: np.save of an ml_dtypes.bfloat16 array
		// writes the 2-byte void '<V2'. It is the only 2-byte void a
		// tensor file holds, so we read it as bfloat16.
		if size == "2" {
			dt = BFloat16
		}
	}
	if dt == Invalid {
		return Invalid, false, fmt.Errorf("unsupported dtype descr %q (supported: bool, int8-64, uint8-64, float16/32/64, bfloat16)", s)
	}
	return dt, big, nil
}

// descrOf is the descr NumPy writes for dt on this host.
func descrOf(dt DType) string {
	order := "<"
	if hostBigEndian {
		order = ">"
	}
	switch dt {
	case Bool:
		return "|b1"
	case Int8:
		return "|i1"
	case Uint8:
		return "|u1"
	case BFloat16:
		return order + "V2"
	}
	kind := "i"
	switch {
	case dt.IsUnsigned():
		kind = "u"
	case dt.IsFloat():
		kind = "f"
	}
	return order + kind + strconv.Itoa(dt.Size())
}

// ReadNpy reads a .npy stream into a new tensor (C order, native byte
// order, garbage-collected storage). Fortran-order data is transposed into
// C order.
//
// The stream may go on after the array (several np.save calls into one
// file); ReadNpy reads exactly one array.
func ReadNpy(r io.Reader) (*Tensor, error) {
	return readNpySized(r, streamLen(r), false, Invalid, nil)
}

// streamLen is the number of unread bytes of r if r knows it (bytes.Reader,
// strings.Reader, bytes.Buffer), else -1.
func streamLen(r io.Reader) int64 {
	if l, ok := r.(interface{ Len() int }); ok {
		return int64(l.Len())
	}
	return -1
}

// ReadNpyAs is ReadNpy that first checks the header against the expected
// dtype and shape (see CheckHeader) and reads no data on a mismatch.
func ReadNpyAs(r io.Reader, dt DType, shape []int64) (*Tensor, error) {
	if !dt.Valid() {
		return nil, fmt.Errorf("npy: invalid expected dtype %v", dt)
	}
	return readNpySized(r, streamLen(r), false, dt, shape)
}

// ReadNpyFile reads a .npy file. Errors name the file.
func ReadNpyFile(path string) (*Tensor, error) { return readNpyFile(path, Invalid, nil) }

// ReadNpyFileAs reads a .npy file that must hold a dt tensor of the given
// shape (a dimension of -1 matches any extent, for symbolic dimensions).
// A mismatch is an error naming the file, what it holds and what was
// expected, e.g. "w.npy: holds float64 (3, 4), expected float32 (3, 4)".
func ReadNpyFileAs(path string, dt DType, shape []int64) (*Tensor, error) {
	if !dt.Valid() {
		return nil, fmt.Errorf("%s: invalid expected dtype %v", path, dt)
	}
	return readNpyFile(path, dt, shape)
}

func readNpyFile(path string, dt DType, shape []int64) (*Tensor, error) {
	f, size, err := openSized(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	t, err := readNpySized(f, size, true, dt, shape)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

// openSized opens a file for reading and returns its size. Its errors
// (*PathError) already name the file.
func openSized(path string) (*os.File, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	return f, st.Size(), nil
}

// readNpySized reads a .npy stream of size bytes (-1: unknown, read what
// the header promises). A known size bounds what we allocate; with exact
// (a whole file or archive entry) it must match the header exactly. An
// expected dtype other than Invalid is checked before any data is read.
func readNpySized(r io.Reader, size int64, exact bool, dt DType, shape []int64) (*Tensor, error) {
	h, err := ReadNpyHeader(r)
	if err != nil {
		return nil, err
	}
	if dt != Invalid {
		if err := h.Check(dt, shape); err != nil {
			return nil, err
		}
	}
	avail := int64(-1)
	if size >= 0 {
		avail = max(0, size-h.DataOffset)
	}
	return readNpyData(r, h, avail, exact)
}

// Check reports whether the header describes a dt tensor of the given
// shape; a negative dimension (-1) in shape matches any extent (a symbolic
// dimension). A nil shape checks the dtype only.
func (h *NpyHeader) Check(dt DType, shape []int64) error {
	if h.DType == dt && (shape == nil || shapeMatches(h.Shape, shape)) {
		return nil
	}
	want := dt.String()
	if shape != nil {
		want += " " + formatPattern(shape)
	}
	return npyErrorf("holds %s %s, expected %s", h.DType, FormatShape(h.Shape), want)
}

// CheckTensor is Check for a tensor already in memory (a parameter bound
// from another source).
func CheckTensor(t *Tensor, dt DType, shape []int64) error {
	h := NpyHeader{DType: t.DType, Shape: t.Shape}
	return h.Check(dt, shape)
}

func shapeMatches(got, want []int64) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if want[i] >= 0 && got[i] != want[i] {
			return false
		}
	}
	return true
}

// formatPattern is FormatShape with wildcard (negative) dimensions shown as '?'.
func formatPattern(shape []int64) string {
	dims := make([]string, len(shape))
	for i, d := range shape {
		dims[i] = "?"
		if d >= 0 {
			dims[i] = strconv.FormatInt(d, 10)
		}
	}
	if len(dims) == 1 {
		return "(" + dims[0] + ",)"
	}
	return "(" + strings.Join(dims, ", ") + ")"
}

// readChunk bounds how much we allocate ahead of the bytes actually read
// when the stream's length is unknown, so a header that lies about its
// shape cannot make us allocate far more than the input holds.
const readChunk = 16 << 20

// readNpyData reads the data the header describes and converts it to a C
// order, native byte order tensor. avail is the number of bytes left in
// the stream, or -1 if unknown; exact means they must all be data.
func readNpyData(r io.Reader, h *NpyHeader, avail int64, exact bool) (*Tensor, error) {
	n, err := byteSize(h.DType, h.Shape)
	if err != nil {
		return nil, npyErrorf("%v", err)
	}
	what := func() string { return fmt.Sprintf("%s %s = %d bytes", h.DType, FormatShape(h.Shape), n) }
	if avail >= 0 && avail < n {
		src := "the stream"
		if exact {
			src = "the file"
		}
		return nil, npyErrorf("truncated data: the header promises %s, %s has %d", what(), src, avail)
	}
	if exact && avail > n {
		return nil, npyErrorf("%d unexpected bytes after the data (the header promises %s)", avail-n, what())
	}
	var s *Storage
	if avail >= 0 || n <= readChunk {
		s = NewStorage(n)
		if got, err := io.ReadFull(r, s.data); err != nil {
			return nil, truncatedData(err, got, what())
		}
	} else {
		if s, err = readGrowing(r, n, what); err != nil {
			return nil, err
		}
	}
	t := &Tensor{DType: h.DType, Shape: h.Shape, Storage: s}
	if h.BigEndian != hostBigEndian {
		swapBytes(s.data, h.DType.Size())
	}
	if h.DType == Bool {
		for i, b := range s.data {
			if b > 1 {
				s.data[i] = 1
			}
		}
	}
	if h.Fortran && len(h.Shape) > 1 {
		t = fortranToC(t)
	}
	return t, nil
}

func truncatedData(err error, got int, what string) error {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return npyErrorf("truncated data: the header promises %s, the stream has %d", what, got)
	}
	return err
}

// readGrowing reads n bytes from a stream of unknown length, growing the
// buffer as data arrives (at most doubling), so a lying header costs at
// most twice the bytes actually present.
func readGrowing(r io.Reader, n int64, what func() string) (*Storage, error) {
	buf := alignedBytes(readChunk, readChunk)
	var have int64
	for have < n {
		if have == int64(len(buf)) {
			next := alignedBytes(min(n, 2*have), min(n, 2*have))
			copy(next, buf)
			buf = next
		}
		got, err := io.ReadFull(r, buf[have:min(n, int64(len(buf)))])
		have += int64(got)
		if err != nil {
			return nil, truncatedData(err, int(have), what())
		}
	}
	return &Storage{data: buf[:n:n]}, nil
}

// hostBigEndian reports the byte order tensors are stored in.
var hostBigEndian = ne.Uint16([]byte{0, 1}) == 1

// swapBytes reverses the bytes of every size-byte element of b.
func swapBytes(b []byte, size int) {
	switch size {
	case 2:
		for i := 0; i+1 < len(b); i += 2 {
			binary.LittleEndian.PutUint16(b[i:], binary.BigEndian.Uint16(b[i:]))
		}
	case 4:
		for i := 0; i+3 < len(b); i += 4 {
			binary.LittleEndian.PutUint32(b[i:], binary.BigEndian.Uint32(b[i:]))
		}
	case 8:
		for i := 0; i+7 < len(b); i += 8 {
			binary.LittleEndian.PutUint64(b[i:], binary.BigEndian.Uint64(b[i:]))
		}
	}
}

// fortranToC copies a Fortran-order tensor into C order. Element
// (i0, ..., ik) sits at sum(i_j * prod(shape[:j])) in Fortran order.
func fortranToC(t *Tensor) *Tensor {
	out := &Tensor{DType: t.DType, Shape: t.Shape, Storage: NewStorage(t.NBytes())}
	if t.NumElements() == 0 {
		return out
	}
	src, dst := t.Bytes(), out.Bytes()
	switch t.DType.Size() {
	case 1:
		gatherFortran(dst, src, t.Shape)
	case 2:
		gatherFortran(asWords[uint16](dst), asWords[uint16](src), t.Shape)
	case 4:
		gatherFortran(asWords[uint32](dst), asWords[uint32](src), t.Shape)
	default:
		gatherFortran(asWords[uint64](dst), asWords[uint64](src), t.Shape)
	}
	return out
}

// asWords reinterprets aligned bytes as a slice of T.
func asWords[T uint16 | uint32 | uint64](b []byte) []T {
	var zero T
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/int(unsafe.Sizeof(zero)))
}

// gatherFortran walks dst in C order with an odometer over the outer
// dimensions, tracking the Fortran offset of the row start incrementally;
// within a row the source stride is the last dimension's Fortran stride.
func gatherFortran[T any](dst, src []T, shape []int64) {
	nd := len(shape)
	fstride := make([]int64, nd)
	acc := int64(1)
	for j := range nd {
		fstride[j] = acc
		acc *= shape[j]
	}
	idx := make([]int64, nd)
	inner, innerStride := shape[nd-1], fstride[nd-1]
	var off int64 // Fortran offset of the current row's first element
	for d := int64(0); d < int64(len(dst)); d += inner {
		row := dst[d : d+inner]
		so := off
		for i := range row {
			row[i] = src[so]
			so += innerStride
		}
		for j := nd - 2; j >= 0; j-- {
			idx[j]++
			off += fstride[j]
			if idx[j] < shape[j] {
				break
			}
			off -= idx[j] * fstride[j]
			idx[j] = 0
		}
	}
}

// WriteNpy writes t in NumPy's exact np.save layout: format 1.0 (2.0 when
// the header needs more than 65535 bytes), the dict with sorted keys and a
// trailing ", ", NumPy's 21-digit growth padding, spaces and a newline up
// to a 64-byte boundary, then the C-order data in native byte order.
// Bfloat16 is written as '<V2', as NumPy does for ml_dtypes.bfloat16.
func WriteNpy(w io.Writer, t *Tensor) error {
	if !t.DType.Valid() {
		return fmt.Errorf("npy: cannot write dtype %v", t.DType)
	}
	if _, err := w.Write(NpyHeaderBytes(t.DType, t.Shape)); err != nil {
		return err
	}
	_, err := w.Write(t.Bytes())
	return err
}

// NpyHeaderBytes is the magic, version, length and header that np.save
// writes for a C-order dt array of this shape (numpy/lib/_format_impl.py,
// _write_array_header and _wrap_header).
func NpyHeaderBytes(dt DType, shape []int64) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "{'descr': '%s', 'fortran_order': False, 'shape': %s, }", descrOf(dt), FormatShape(shape))
	if len(shape) > 0 {
		// Spare room so the array can grow along axis 0 in place
		// (GROWTH_AXIS_MAX_DIGITS = 21).
		b.WriteString(strings.Repeat(" ", max(0, 21-len(strconv.FormatInt(shape[0], 10)))))
	}
	hdr := b.String()
	hlen := len(hdr) + 1 // + the final newline
	pre, major := 10, byte(1)
	pad := 64 - (pre+hlen)%64
	if hlen+pad > 0xffff {
		pre, major = 12, 2 // the length no longer fits format 1.0's uint16
		pad = 64 - (pre+hlen)%64
	}
	out := make([]byte, 0, pre+hlen+pad)
	out = append(out, npyMagic...)
	out = append(out, major, 0)
	total := hlen + pad
	if major == 1 {
		out = binary.LittleEndian.AppendUint16(out, uint16(total))
	} else {
		out = binary.LittleEndian.AppendUint32(out, uint32(total))
	}
	out = append(out, hdr...)
	out = append(out, strings.Repeat(" ", pad)...)
	return append(out, '\n')
}

// WriteNpyFile writes t to path in .npy format.
func WriteNpyFile(path string, t *Tensor) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := WriteNpy(f, t); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	return f.Close()
}
