package gfm

import (
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"
)

func render(b *strings.Builder, n *node) {
	for ; n != nil; n = n.next {
		switch n.kind {
		case kText:
			writeText(b, n.s)
		case kHTML:
			b.WriteString(n.s)
		case kCode:
			b.WriteString("<code>")
			writeRaw(b, n.s)
			b.WriteString("</code>")
		case kSoft:
			b.WriteByte('\n')
		case kHard:
			b.WriteString("<br>\n")
		case kLink:
			b.WriteString(`<a href="`)
			writeRaw(b, escapeURL(resolve(n.s)))
			b.WriteByte('"')
			writeTitle(b, n)
			render(b, n.first)
			b.WriteString("</a>")
		case kImage:
			b.WriteString(`<img src="`)
			writeRaw(b, escapeURL(resolve(n.s)))
			b.WriteString(`" alt="`)
			plain(b, n.first)
			b.WriteByte('"')
			writeTitle(b, n)
		case kAuto:
			b.WriteString(`<a href="`)
			writeRaw(b, escapeURL(n.s))
			b.WriteString(`">`)
			writeRaw(b, n.title)
			b.WriteString("</a>")
		case kEm, kStrong, kDel:
			tag := map[kind]string{kEm: "em", kStrong: "strong", kDel: "del"}[n.kind]
			b.WriteString("<" + tag + ">")
			render(b, n.first)
			b.WriteString("</" + tag + ">")
		}
	}
}

// writeTitle ends a link's or image's open tag with its title, if it has
// one.
func writeTitle(b *strings.Builder, n *node) {
	if n.titled {
		b.WriteString(` title="`)
		writeText(b, n.title)
		b.WriteByte('"')
	}
	b.WriteByte('>')
}

// plain writes the text of nodes, as an image's alt text.
func plain(b *strings.Builder, n *node) {
	for ; n != nil; n = n.next {
		switch n.kind {
		case kText:
			writeText(b, n.s)
		case kCode:
			writeRaw(b, n.s)
		case kSoft, kHard:
			b.WriteByte('\n')
		case kAuto:
			writeRaw(b, n.title)
		default:
			plain(b, n.first)
		}
	}
}

// writeRaw writes s with < > & " escaped.
func writeRaw(b *strings.Builder, s string) {
	for i := 0; i < len(s); i++ {
		if e := escapeByte(s[i]); e != "" {
			b.WriteString(e)
		} else {
			b.WriteByte(s[i])
		}
	}
}

func escapeByte(c byte) string {
	switch c {
	case '<':
		return "&lt;"
	case '>':
		return "&gt;"
	case '&':
		return "&amp;"
	case '"':
		return "&quot;"
	}
	return ""
}

// writeText writes source text: a backslash before punctuation goes,
// character references become their characters, and the result is
// escaped (goldmark's Writer.Write).
func writeText(b *strings.Builder, s string) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s) && isPunct(s[i+1]):
			i++
			writeRaw(b, s[i:i+1])
		case c == 0:
			b.WriteString("\uFFFD")
		case c == '&':
			if r, n := reference(s[i:]); n > 0 {
				b.WriteString(r)
				i += n - 1
				continue
			}
			b.WriteString("&amp;")
		default:
			writeRaw(b, s[i:i+1])
		}
	}
}

// reference reads a character reference at the start of s: the escaped
// HTML of its character and its length, 0 if it is none.
func reference(s string) (string, int) {
	if len(s) > 2 && s[1] == '#' {
		hex := s[2] == 'x' || s[2] == 'X'
		from := 2
		if hex {
			from = 3
		}
		j := from
		for j < len(s) && (isDigit(s[j]) || hex && strings.IndexByte("abcdefABCDEF", s[j]) >= 0) {
			j++
		}
		if j == from || j >= len(s) || s[j] != ';' || hex && j-from >= 7 || !hex && j-from >= 8 {
			return "", 0
		}
		base := 10
		if hex {
			base = 16
		}
		v, _ := strconv.ParseUint(s[from:j], base, 32)
		return escapeRune(rune(v)), j + 1
	}
	j := 1
	for j < len(s) && (isLetter(s[j]) || isDigit(s[j])) {
		j++
	}
	if j == 1 || j >= len(s) || s[j] != ';' {
		return "", 0
	}
	if r, ok := entity(s[1:j]); ok {
		var b strings.Builder
		writeRaw(&b, r)
		return b.String(), j + 1
	}
	return "", 0
}

func escapeRune(r rune) string {
	if r < 256 {
		if e := escapeByte(byte(r)); e != "" {
			return e
		}
	}
	if r == 0 || !utf8.ValidRune(r) {
		r = utf8.RuneError
	}
	return string(r)
}

// entity is the character a named reference stands for, of those
// flakegate's Markdown may hold (a switch, not a map, so that nothing is
// built at start-up).
func entity(name string) (string, bool) {
	switch name {
	case "amp":
		return "&", true
	case "lt":
		return "<", true
	case "gt":
		return ">", true
	case "quot":
		return "\"", true
	case "apos":
		return "'", true
	case "nbsp":
		return "\u00a0", true
	case "copy":
		return "©", true
	case "reg":
		return "®", true
	case "hellip":
		return "…", true
	case "mdash":
		return "—", true
	case "ndash":
		return "–", true
	case "middot":
		return "·", true
	case "times":
		return "×", true
	case "rarr":
		return "→", true
	case "larr":
		return "←", true
	case "check":
		return "✓", true
	case "cross":
		return "✗", true
	case "bull":
		return "•", true
	}
	return "", false
}

// resolve undoes backslash escapes and character references in a link
// destination.
func resolve(s string) string {
	if !strings.ContainsAny(s, `\&`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s) && isPunct(s[i+1]):
			i++
			b.WriteByte(s[i])
		case c == '&':
			if r, n := rawReference(s[i:]); n > 0 {
				b.WriteString(r)
				i += n - 1
				continue
			}
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// rawReference is reference without the escaping.
func rawReference(s string) (string, int) {
	h, n := reference(s)
	if n == 0 {
		return "", 0
	}
	switch h {
	case "&lt;":
		h = "<"
	case "&gt;":
		h = ">"
	case "&amp;":
		h = "&"
	case "&quot;":
		h = "\""
	}
	return h, n
}

// escapeURL percent-encodes what goldmark's URLEscape does: bytes outside
// the URL-safe set, except a %XX already there.
func escapeURL(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		c := s[i]
		if urlSafe(c) {
			b.WriteByte(c)
			i++
			continue
		}
		if c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			b.WriteString(s[i : i+3])
			i += 3
			continue
		}
		if c == ' ' {
			b.WriteString("%20")
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			i++
			continue
		}
		b.WriteString(url.QueryEscape(s[i : i+n]))
		i += n
	}
	return b.String()
}

func isHex(c byte) bool { return isDigit(c) || c|0x20 >= 'a' && c|0x20 <= 'f' }

// urlSafe is goldmark's urlEscapeTable: letters, digits and
// ;/?:@&=+$,-_.!~*'()#
func urlSafe(c byte) bool {
	return isLetter(c) || isDigit(c) || c < 0x80 && strings.IndexByte(";/?:@&=+$,-_.!~*'()#", c) >= 0
}
