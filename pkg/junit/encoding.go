package junit

import (
	"bytes"
	"io"
	"regexp"
	"strings"
	"sync"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/ianaindex"
	"golang.org/x/text/encoding/unicode"
	"golang.org/x/text/transform"
)

var encodingAttr = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`encoding\s*=\s*["']([A-Za-z0-9._:-]+)["']`) })

// prolog reads the byte-order mark and the XML declaration and, when the
// document is not UTF-8, puts a decoder in front of the rest of the input.
func (r *Reader) prolog() error {
	r.need(1024) // the byte-order mark and the declaration, if any
	b := r.buf[r.pos:r.end]
	switch {
	case bytes.HasPrefix(b, []byte{0xEF, 0xBB, 0xBF}):
		r.pos += 3
	case bytes.HasPrefix(b, []byte{0xFF, 0xFE}), bytes.HasPrefix(b, []byte{0xFE, 0xFF}):
		r.decodeRest(unicode.UTF16(unicode.BigEndian, unicode.ExpectBOM))
		return nil // the declaration, if any, now reads as UTF-8 and is skipped
	case bytes.HasPrefix(b, []byte{'<', 0}), bytes.HasPrefix(b, []byte{0, '<'}):
		// UTF-16 without the byte-order mark XML asks for: a document
		// starts with "<", and NUL is no XML character, so the order
		// of the first two bytes tells the byte order.
		order := unicode.LittleEndian
		if b[0] == 0 {
			order = unicode.BigEndian
		}
		r.decodeRest(unicode.UTF16(order, unicode.IgnoreBOM))
		return nil
	case bytes.HasPrefix(b, []byte{0x1F, 0x8B}):
		return r.errf(r.pos, "a gzip-compressed file: decompress it first (gunzip) and read the XML")
	}
	if !bytes.HasPrefix(r.buf[r.pos:r.end], []byte("<?xml")) {
		return nil
	}
	decl := r.buf[r.pos:r.end]
	end := bytes.Index(decl, []byte("?>"))
	if end < 0 {
		return r.errf(r.pos, "unterminated XML declaration")
	}
	if d := decl[:end]; bytes.Contains(d, []byte(`encoding="UTF-8"`)) || bytes.Contains(d, []byte(`encoding="utf-8"`)) {
		return nil // nearly every file: no need for the expression
	}
	m := encodingAttr().FindSubmatch(decl[:end])
	if m == nil {
		return nil
	}
	name := strings.ToLower(string(m[1]))
	switch name {
	case "utf-8", "utf8", "us-ascii", "ascii":
		return nil
	case "utf-16", "utf-16le", "utf-16be":
		return r.errf(r.pos, "encoding %q declared but the file has no UTF-16 byte-order mark", m[1])
	}
	enc, err := ianaindex.IANA.Encoding(name)
	if err != nil || enc == nil {
		return r.errf(r.pos, "unsupported encoding %q: accepted are UTF-8, UTF-16 with a byte-order mark, and single-byte IANA encodings such as ISO-8859-1 and windows-1252", m[1])
	}
	r.pos += end + 2
	r.decodeRest(enc)
	return nil
}

// decodeRest routes the unread input through a decoder to UTF-8.
func (r *Reader) decodeRest(enc encoding.Encoding) {
	rest := append([]byte(nil), r.buf[r.pos:r.end]...)
	r.lines += bytes.Count(r.buf[:r.pos], []byte{'\n'})
	r.src = transform.NewReader(io.MultiReader(bytes.NewReader(rest), r.src), enc.NewDecoder())
	r.pos, r.end, r.eof = 0, 0, false
	r.fill(0)
}
