package gfm

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

type kind uint8

const (
	kText   kind = iota // source text: escapes and references are resolved as it is written
	kHTML               // raw HTML, written as it is
	kCode               // a code span's content
	kSoft               // a soft line break
	kHard               // a hard line break
	kLink               // an inline link: s is its destination, title its title
	kImage              // an inline image
	kAuto               // an autolink: s is its href, title its label
	kEm                 // emphasis
	kStrong             // strong emphasis
	kDel                // strikethrough
)

// node is an inline, in a doubly linked list of its siblings.
type node struct {
	kind        kind
	s, title    string
	first, last *node // children of links and emphasis
	prev, next  *node
	titled      bool
}

// seq is a list of nodes.
type seq struct{ first, last *node }

func (q *seq) add(n *node) {
	n.prev, n.next = q.last, nil
	if q.last != nil {
		q.last.next = n
	} else {
		q.first = n
	}
	q.last = n
}

func (q *seq) remove(n *node) {
	if n.prev != nil {
		n.prev.next = n.next
	} else {
		q.first = n.next
	}
	if n.next != nil {
		n.next.prev = n.prev
	} else {
		q.last = n.prev
	}
	n.prev, n.next = nil, nil
}

// wrap moves the nodes after from, up to end (nil: to the last), into n,
// and puts n after from.
func (q *seq) wrap(n, from, end *node) {
	var kids seq
	for c := from.next; c != nil && c != end; {
		next := c.next
		q.remove(c)
		kids.add(c)
		c = next
	}
	n.first, n.last = kids.first, kids.last
	q.insertAfter(from, n)
}

func (q *seq) insertAfter(at, n *node) {
	n.prev, n.next = at, at.next
	if at.next != nil {
		at.next.prev = n
	} else {
		q.last = n
	}
	at.next = n
}

// delim is a run of * _ or ~ that may open or close emphasis.
type delim struct {
	n                 *node
	char              byte
	length, orig      int
	canOpen, canClose bool
	prev, next        *delim
}

// bracket is a [ or ![ that may begin a link.
type bracket struct {
	n      *node
	image  bool
	active bool
	bottom *delim // the last delimiter before it
}

type inliner struct {
	s        string
	cell     bool // in a table cell, a code span's \| is |
	q        seq
	delims   *delim // the last
	brackets []*bracket
}

// inlines renders s, a paragraph's, heading's or cell's text; a list
// item's first paragraph (task) may begin with a check box, [ ] or [x].
func inlines(b *strings.Builder, s string, cell, task bool) {
	if task && len(s) >= 3 && s[0] == '[' && s[2] == ']' && strings.IndexByte(" \t\n\f\rxX", s[1]) >= 0 {
		if s[1] == 'x' || s[1] == 'X' {
			b.WriteString(`<input checked="" disabled="" type="checkbox"> `)
		} else {
			b.WriteString(`<input disabled="" type="checkbox"> `)
		}
		s = strings.TrimLeft(s[3:], " \t\n\f\r")
	}
	p := &inliner{s: s, cell: cell}
	p.parse()
	p.emphasis(nil)
	render(b, p.q.first)
}

func (p *inliner) text(from, to int) {
	if from < to {
		p.q.add(&node{kind: kText, s: p.s[from:to]})
	}
}

func (p *inliner) parse() {
	s := p.s
	start := 0   // of the text not yet added
	line := 0    // where the line begins
	head := true // at a line's start or after an inline: the autolinker looks here
	for i := 0; i < len(s); {
		c := s[i]
		at := head
		head = false
		if c == '\n' {
			// A soft break, or a hard one after a backslash or two spaces
			// (the line's last characters, as goldmark reads them).
			end := i
			hard := false
			switch {
			case end-line >= 1 && s[end-1] == '\\' && (end-line == 1 || s[end-2] != '\\'):
				hard = true
				p.text(start, max(start, end-1))
			default:
				if end-line >= 2 && s[end-1] == ' ' && s[end-2] == ' ' {
					hard = true
					end -= 2
				}
				// goldmark trims the last text of the line, which begins
				// at its last blank: one blank.
				if end > start && (s[end-1] == ' ' || s[end-1] == '\t') {
					end--
				}
				p.text(start, max(start, end))
			}
			if hard {
				p.q.add(&node{kind: kHard})
			} else {
				p.q.add(&node{kind: kSoft})
			}
			i++
			for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
				i++
			}
			start, line, head = i, i, true
			continue
		}
		if c == '\\' {
			if i+1 < len(s) && isPunct(s[i+1]) {
				// cmark-gfm, which GitHub renders with, looks for a www.
				// autolink after any of * _ ~ ( in the source, escaped or
				// not: "\_www.example.com" is a link there.
				head = strings.IndexByte("*_~(", s[i+1]) >= 0
				i += 2
				continue
			}
			i++
			continue
		}
		space := c == ' ' || c == '\t'
		if !isPunct(c) && !space && !at {
			i++
			continue
		}
		if n := p.trigger(i, start, at); n > 0 {
			i += n
			start, head = i, true
			continue
		}
		i++
	}
	p.text(start, len(s))
}

// trigger tries the inline parsers of s[i]; it returns how much of s they
// took, having added the text before i.
func (p *inliner) trigger(i, start int, at bool) int {
	s := p.s
	c := s[i]
	flush := func() { p.text(start, i) }
	switch c {
	case '`':
		n := 0
		for i+n < len(s) && s[i+n] == '`' {
			n++
		}
		flush()
		if end, ok := closingTicks(s, i+n, n); ok {
			code := s[i+n : end]
			code = strings.ReplaceAll(code, "\n", " ")
			if len(code) >= 2 && code[0] == ' ' && code[len(code)-1] == ' ' && strings.Trim(code, " ") != "" {
				code = code[1 : len(code)-1]
			}
			if p.cell {
				code = strings.ReplaceAll(code, `\|`, "|")
			}
			p.q.add(&node{kind: kCode, s: code})
			return end + n - i
		}
		p.q.add(&node{kind: kText, s: s[i : i+n]})
		return n
	case '*', '_', '~':
		n := 0
		for i+n < len(s) && s[i+n] == c {
			n++
		}
		before := '\n'
		if i > 0 {
			before, _ = utf8.DecodeLastRuneInString(s[:i])
		}
		if c == '~' && (n > 2 || before == '~') {
			return p.linkify(i, start, true)
		}
		after := '\n'
		if i+n < len(s) {
			after, _ = utf8.DecodeRuneInString(s[i+n:])
		}
		bp, bs := isPunctRune(before), isSpaceRune(before)
		ap, as := isPunctRune(after), isSpaceRune(after)
		left := !as && (!ap || bs || bp)
		right := !bs && (!bp || as || ap)
		d := &delim{char: c, length: n, orig: n}
		if c == '_' {
			d.canOpen = left && (!right || bp)
			d.canClose = right && (!left || ap)
		} else {
			d.canOpen, d.canClose = left, right
		}
		flush()
		d.n = &node{kind: kText, s: s[i : i+n]}
		p.q.add(d.n)
		d.prev = p.delims
		if p.delims != nil {
			p.delims.next = d
		}
		p.delims = d
		return n
	case '!':
		if i+1 < len(s) && s[i+1] == '[' {
			flush()
			n := &node{kind: kText, s: "!["}
			p.q.add(n)
			p.brackets = append(p.brackets, &bracket{n: n, image: true, active: true, bottom: p.delims})
			return 2
		}
	case '[':
		flush()
		n := &node{kind: kText, s: "["}
		p.q.add(n)
		p.brackets = append(p.brackets, &bracket{n: n, active: true, bottom: p.delims})
		return 1
	case ']':
		return p.closeBracket(i, start)
	case '<':
		if n, href := autolink(s[i:]); n > 0 {
			flush()
			p.q.add(&node{kind: kAuto, s: href, title: s[i+1 : i+n-1]})
			return n
		}
		if n := rawInline(s[i:]); n > 0 {
			flush()
			p.q.add(&node{kind: kHTML, s: s[i : i+n]})
			return n
		}
	case '(', ' ', '\t':
		return p.linkify(i, start, true)
	default:
		if at {
			return p.linkify(i, start, false)
		}
	}
	return 0
}

// closingTicks finds the run of exactly n backticks that closes a code
// span begun before from.
func closingTicks(s string, from, n int) (int, bool) {
	for j := from; j < len(s); {
		if s[j] != '`' {
			j++
			continue
		}
		k := j
		for k < len(s) && s[k] == '`' {
			k++
		}
		if k-j == n {
			return j, true
		}
		j = k
	}
	return 0, false
}

func (p *inliner) closeBracket(i, start int) int {
	if len(p.brackets) == 0 {
		return 0
	}
	br := p.brackets[len(p.brackets)-1]
	p.brackets = p.brackets[:len(p.brackets)-1]
	if !br.active {
		return 0
	}
	n, dest, title, titled := linkTail(p.s[i+1:])
	if n == 0 {
		return 0
	}
	p.text(start, i)
	p.emphasis(br.bottom)
	link := &node{kind: kLink, s: dest, title: title, titled: titled}
	if br.image {
		link.kind = kImage
	}
	p.q.wrap(link, br.n, nil)
	p.q.remove(br.n)
	if !br.image {
		for _, o := range p.brackets {
			if !o.image {
				o.active = false
			}
		}
	}
	return 1 + n
}

// linkTail reads an inline link's "(destination "title")" at the start of
// s, returning its length, 0 if there is none.
func linkTail(s string) (n int, dest, title string, titled bool) {
	if !strings.HasPrefix(s, "(") {
		return 0, "", "", false
	}
	i := skipSpace(s, 1)
	if i < len(s) && s[i] == '<' {
		j := i + 1
		for j < len(s) && s[j] != '>' && s[j] != '\n' && s[j] != '<' {
			if s[j] == '\\' && j+1 < len(s) && isPunct(s[j+1]) {
				j++
			}
			j++
		}
		if j >= len(s) || s[j] != '>' {
			return 0, "", "", false
		}
		dest = s[i+1 : j]
		i = j + 1
	} else {
		depth := 0
		j := i
		for j < len(s) {
			c := s[j]
			if c == '\\' && j+1 < len(s) && isPunct(s[j+1]) {
				j += 2
				continue
			}
			if c <= ' ' {
				break
			}
			if c == '(' {
				depth++
			} else if c == ')' {
				if depth == 0 {
					break
				}
				depth--
			}
			j++
		}
		if depth != 0 {
			return 0, "", "", false
		}
		dest = s[i:j]
		i = j
	}
	k := skipSpace(s, i)
	if k > i && k < len(s) && (s[k] == '"' || s[k] == '\'' || s[k] == '(') {
		closer := s[k]
		if closer == '(' {
			closer = ')'
		}
		j := k + 1
		for j < len(s) && s[j] != closer {
			if s[j] == '\\' && j+1 < len(s) && isPunct(s[j+1]) {
				j++
			}
			j++
		}
		if j >= len(s) {
			return 0, "", "", false
		}
		title, titled = s[k+1:j], true
		k = skipSpace(s, j+1)
	}
	if k >= len(s) || s[k] != ')' {
		return 0, "", "", false
	}
	return k + 1, dest, title, titled
}

// skipSpace skips blanks and at most one line break.
func skipSpace(s string, i int) int {
	nl := false
	for i < len(s) {
		switch {
		case s[i] == ' ' || s[i] == '\t':
		case s[i] == '\n' && !nl:
			nl = true
		default:
			return i
		}
		i++
	}
	return i
}

// emphasis matches the delimiters above bottom into emphasis and
// strikethrough, as goldmark's ProcessDelimiters does, and removes them.
func (p *inliner) emphasis(bottom *delim) {
	var closer *delim
	for d := p.delims; d != nil && d != bottom; d = d.prev {
		closer = d
	}
	for closer != nil {
		if !closer.canClose {
			closer = closer.next
			continue
		}
		var opener *delim
		consume := 0
		maybe := false
		for o := closer.prev; o != nil && o != bottom; o = o.prev {
			if o.canOpen && o.char == closer.char {
				maybe = true
				consume = consumption(o, closer)
				if consume > 0 {
					opener = o
					break
				}
			}
		}
		if opener == nil {
			next := closer.next
			if !maybe && !closer.canOpen {
				p.unlink(closer)
			}
			closer = next
			continue
		}
		opener.length -= consume
		closer.length -= consume
		opener.n.s = opener.n.s[:opener.length]
		closer.n.s = closer.n.s[:closer.length]
		k := kEm
		switch {
		case opener.char == '~':
			k = kDel
		case consume == 2:
			k = kStrong
		}
		p.q.wrap(&node{kind: k}, opener.n, closer.n)
		for d := opener.next; d != nil && d != closer; {
			next := d.next
			p.unlink(d)
			d = next
		}
		if opener.length == 0 {
			p.q.remove(opener.n)
			p.unlink(opener)
		}
		if closer.length == 0 {
			next := closer.next
			p.q.remove(closer.n)
			p.unlink(closer)
			closer = next
		}
	}
	for d := p.delims; d != nil && d != bottom; {
		prev := d.prev
		p.unlink(d)
		d = prev
	}
}

func consumption(o, c *delim) int {
	if (o.canClose || c.canOpen) && (o.orig+c.orig)%3 == 0 && c.orig%3 != 0 {
		return 0
	}
	if o.length >= 2 && c.length >= 2 {
		return 2
	}
	return 1
}

func (p *inliner) unlink(d *delim) {
	if d.prev != nil {
		d.prev.next = d.next
	}
	if d.next != nil {
		d.next.prev = d.prev
	} else if p.delims == d {
		p.delims = d.prev
	}
	d.prev, d.next = nil, nil
}

func isPunct(c byte) bool {
	return c >= '!' && c <= '/' || c >= ':' && c <= '@' || c >= '[' && c <= '`' || c >= '{' && c <= '~'
}

func isPunctRune(r rune) bool {
	if r < utf8.RuneSelf {
		return isPunct(byte(r))
	}
	return unicode.IsSymbol(r) || unicode.IsPunct(r)
}

func isSpaceRune(r rune) bool {
	switch r {
	case ' ', '\t', '\n', '\v', '\f', '\r':
		return true
	}
	return unicode.IsSpace(r)
}

func isLetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }
func isDigit(c byte) bool  { return c >= '0' && c <= '9' }
