package gfm

import (
	"strconv"
	"strings"
)

// blocks renders lines as blocks. In a tight list item (tight) a
// paragraph is its text alone, without <p>; in a list item (item) a
// first paragraph may begin with a task's check box. It reports whether a
// blank line came between two of the blocks, which makes the list of an
// item with them loose.
func blocks(b *strings.Builder, lines []string, tight, item bool) (blankBetween bool) {
	afterText := false // a tight paragraph ends without a line break, unless a block follows
	seen, blank := false, false
	for i := 0; i < len(lines); {
		l := lines[i]
		if isBlank(l) {
			blank = blank || seen
			i++
			continue
		}
		blankBetween = blankBetween || blank
		seen, blank = true, false
		if afterText {
			b.WriteByte('\n')
			afterText = false
		}
		first := item
		item = false
		if indent(l) >= 4 {
			i = indentedCode(b, lines, i)
			continue
		}
		if c, n, info, ok := fenceOpen(l); ok {
			i = fencedCode(b, lines, i, c, n, info)
			continue
		}
		if kind := htmlStart(l, false); kind > 0 {
			i = htmlBlock(b, lines, i, kind)
			continue
		}
		if level, text, ok := atxHeading(l); ok {
			heading(b, level, text)
			i++
			continue
		}
		if isBreak(l) {
			b.WriteString("<hr>\n")
			i++
			continue
		}
		if _, ok := quoteLine(l); ok {
			i = quote(b, lines, i)
			continue
		}
		if _, ok := listMarker(l); ok {
			i = list(b, lines, i)
			continue
		}
		i, afterText = paragraph(b, lines, i, tight, first)
	}
	return blankBetween
}

// interrupts reports whether l starts a block that ends a paragraph.
func interrupts(l string) bool {
	if indent(l) >= 4 {
		return false
	}
	if startsLeaf(l, true) {
		return true
	}
	if _, ok := quoteLine(l); ok {
		return true
	}
	if m, ok := listMarker(l); ok && !m.empty && (!m.ordered || m.start == 1) {
		return true
	}
	return false
}

func heading(b *strings.Builder, level int, text string) {
	tag := "h" + strconv.Itoa(level)
	b.WriteString("<" + tag + ">")
	inlines(b, text, false, false)
	b.WriteString("</" + tag + ">\n")
}

// atxHeading reads "## text ##".
func atxHeading(l string) (level int, text string, ok bool) {
	s := body(l)
	for level < len(s) && s[level] == '#' {
		level++
	}
	if level == 0 || level > 6 || level < len(s) && s[level] != ' ' && s[level] != '\t' {
		return 0, "", false
	}
	text = strings.Trim(s[level:], " \t")
	// A closing run of #s, after a space or alone.
	j := len(text)
	for j > 0 && text[j-1] == '#' {
		j--
	}
	if j == 0 {
		text = ""
	} else if j < len(text) && (text[j-1] == ' ' || text[j-1] == '\t') {
		text = strings.TrimRight(text[:j], " \t")
	}
	return level, text, true
}

// isBreak reports a thematic break: three or more of one of - * _.
func isBreak(l string) bool {
	s := body(l)
	if s == "" || (s[0] != '-' && s[0] != '*' && s[0] != '_') {
		return false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case s[0]:
			n++
		case ' ', '\t':
		default:
			return false
		}
	}
	return n >= 3
}

// setext reports a setext heading underline and its level.
func setext(l string) int {
	if indent(l) >= 4 {
		return 0
	}
	s := strings.TrimRight(body(l), " \t")
	if s == "" || strings.Trim(s, s[:1]) != "" {
		return 0
	}
	switch s[0] {
	case '=':
		return 1
	case '-':
		return 2
	}
	return 0
}

func fenceOpen(l string) (c byte, n int, info string, ok bool) {
	if indent(l) >= 4 {
		return 0, 0, "", false
	}
	s := body(l)
	if s == "" || (s[0] != '`' && s[0] != '~') {
		return 0, 0, "", false
	}
	c = s[0]
	for n < len(s) && s[n] == c {
		n++
	}
	if n < 3 {
		return 0, 0, "", false
	}
	info = strings.TrimSpace(s[n:])
	if c == '`' && strings.Contains(info, "`") {
		return 0, 0, "", false
	}
	return c, n, info, true
}

// fenceCloses reports whether line l closes a block opened by n fence
// characters c: at least n of them, and nothing else, indented by less than
// four columns.
func fenceCloses(l string, c byte, n int) bool {
	if indent(l) >= 4 {
		return false
	}
	s := strings.TrimRight(body(l), " \t")
	k := 0
	for k < len(s) && s[k] == c {
		k++
	}
	return k >= n && k == len(s)
}

func fencedCode(b *strings.Builder, lines []string, i int, c byte, n int, info string) int {
	in := indent(lines[i])
	b.WriteString("<pre><code")
	if info != "" {
		lang := info
		if k := strings.IndexAny(lang, " \t"); k >= 0 {
			lang = lang[:k]
		}
		b.WriteString(` class="language-`)
		writeText(b, lang)
		b.WriteString(`"`)
	}
	b.WriteString(">")
	i++
	for ; i < len(lines); i++ {
		l := lines[i]
		if fenceCloses(l, c, n) {
			i++
			break
		}
		k := 0
		for k < in && k < len(l) && l[k] == ' ' {
			k++
		}
		writeRaw(b, l[k:])
		b.WriteByte('\n')
	}
	b.WriteString("</code></pre>\n")
	return i
}

func indentedCode(b *strings.Builder, lines []string, i int) int {
	j := i
	end := i
	for ; j < len(lines); j++ {
		if isBlank(lines[j]) {
			continue
		}
		if indent(lines[j]) < 4 {
			break
		}
		end = j + 1
	}
	b.WriteString("<pre><code>")
	for _, l := range lines[i:end] {
		writeRaw(b, stripCols(l, 0, 4))
		b.WriteByte('\n')
	}
	b.WriteString("</code></pre>\n")
	return end
}

// blockTags are the HTML block start tags (CommonMark's kind 6).
var blockTags = []string{
	"address", "article", "aside", "base", "basefont", "blockquote", "body",
	"caption", "center", "col", "colgroup", "dd", "details", "dialog", "dir",
	"div", "dl", "dt", "fieldset", "figcaption", "figure", "footer", "form",
	"frame", "frameset", "h1", "h2", "h3", "h4", "h5", "h6", "head", "header",
	"hr", "html", "iframe", "legend", "li", "link", "main", "menu",
	"menuitem", "nav", "noframes", "ol", "optgroup", "option", "p", "param",
	"search", "section", "summary", "table", "tbody", "td", "tfoot", "th",
	"thead", "title", "tr", "track", "ul",
}

// htmlStart returns the kind (1 to 7) of HTML block l starts, or 0. Kind
// 7 cannot interrupt a paragraph (inPara).
func htmlStart(l string, inPara bool) int {
	if indent(l) >= 4 {
		return 0
	}
	s := body(l)
	if !strings.HasPrefix(s, "<") {
		return 0
	}
	low := strings.ToLower(s)
	for _, t := range []string{"pre", "script", "style", "textarea"} {
		if strings.HasPrefix(low[1:], t) {
			rest := low[1+len(t):]
			if rest == "" || rest[0] == ' ' || rest[0] == '\t' || rest[0] == '>' {
				return 1
			}
		}
	}
	switch {
	case strings.HasPrefix(s, "<!--"):
		return 2
	case strings.HasPrefix(s, "<?"):
		return 3
	case strings.HasPrefix(s, "<![CDATA["):
		return 5
	case len(s) > 2 && s[1] == '!' && isLetter(s[2]):
		return 4
	}
	name := low[1:]
	name = strings.TrimPrefix(name, "/")
	k := 0
	for k < len(name) && (isLetter(name[k]) || isDigit(name[k])) {
		k++
	}
	rest := name[k:]
	for _, t := range blockTags {
		if name[:k] == t && (rest == "" || rest[0] == ' ' || rest[0] == '\t' || rest[0] == '>' || strings.HasPrefix(rest, "/>")) {
			return 6
		}
	}
	if inPara {
		return 0
	}
	if n := rawTag(s); n > 0 && isBlank(s[n:]) {
		return 7
	}
	return 0
}

func htmlBlock(b *strings.Builder, lines []string, i, kind int) int {
	var ends []string
	switch kind {
	case 1:
		ends = []string{"</pre>", "</script>", "</style>", "</textarea>"}
	case 2:
		ends = []string{"-->"}
	case 3:
		ends = []string{"?>"}
	case 4:
		ends = []string{">"}
	case 5:
		ends = []string{"]]>"}
	}
	for ; i < len(lines); i++ {
		l := lines[i]
		if kind >= 6 && isBlank(l) {
			break
		}
		b.WriteString(l)
		b.WriteByte('\n')
		if ends != nil {
			low := strings.ToLower(l)
			for _, e := range ends {
				if strings.Contains(low, e) {
					return i + 1
				}
			}
		}
	}
	return i
}

// quoteLine returns l without its block quote marker.
func quoteLine(l string) (string, bool) {
	s := body(l)
	if indent(l) >= 4 || !strings.HasPrefix(s, ">") {
		return "", false
	}
	// The marker may be followed by a space, which may be a tab's first
	// column.
	col := indent(l) + 1
	if strings.HasPrefix(s[1:], " ") || strings.HasPrefix(s[1:], "\t") {
		return inner(s[1:], col, 1), true
	}
	return inner(s[1:], col, 0), true
}

func quote(b *strings.Builder, lines []string, i int) int {
	var inner []string
	for ; i < len(lines); i++ {
		l := lines[i]
		if s, ok := quoteLine(l); ok {
			inner = append(inner, s)
			continue
		}
		// A lazy continuation line of a paragraph.
		if !isBlank(l) && len(inner) > 0 && lazyTarget(inner) && !interrupts(l) {
			inner = append(inner, l)
			continue
		}
		break
	}
	b.WriteString("<blockquote>\n")
	blocks(b, inner, false, false)
	b.WriteString("</blockquote>\n")
	return i
}

// lazyTarget reports whether the last of lines leaves a paragraph open,
// which a lazy continuation line continues.
func lazyTarget(lines []string) bool {
	last := lines[len(lines)-1]
	for {
		if isBlank(last) || indent(last) >= 4 {
			return false
		}
		if s, ok := quoteLine(last); ok {
			last = s
			continue
		}
		if m, ok := listMarker(last); ok {
			if m.empty {
				return false
			}
			last = m.first
			continue
		}
		break
	}
	return !startsLeaf(last, false)
}

// startsLeaf reports whether l begins a fenced code block, an HTML block
// (of a kind that can interrupt a paragraph, inPara), a heading or a
// thematic break: a line that is no paragraph's.
func startsLeaf(l string, inPara bool) bool {
	if _, _, _, ok := fenceOpen(l); ok {
		return true
	}
	if htmlStart(l, inPara) > 0 {
		return true
	}
	if _, _, ok := atxHeading(l); ok {
		return true
	}
	return isBreak(l)
}

type marker struct {
	ordered bool
	char    byte // - + * or . )
	start   int
	width   int    // the indent of the item's content, in columns
	first   string // the content on the marker's line
	empty   bool
}

func listMarker(l string) (marker, bool) {
	in := indent(l)
	if in >= 4 {
		return marker{}, false
	}
	s := body(l)
	var m marker
	k := 0
	switch {
	case s != "" && (s[0] == '-' || s[0] == '+' || s[0] == '*'):
		m.char = s[0]
		k = 1
	default:
		for k < len(s) && k < 9 && isDigit(s[k]) {
			k++
		}
		if k == 0 || k >= len(s) || (s[k] != '.' && s[k] != ')') {
			return marker{}, false
		}
		m.ordered = true
		m.start, _ = strconv.Atoi(s[:k])
		m.char = s[k]
		k++
	}
	rest := s[k:]
	if rest != "" && rest[0] != ' ' && rest[0] != '\t' {
		return marker{}, false
	}
	if isBlank(rest) {
		m.empty = true
		m.width = in + k + 1
		return m, true
	}
	sp := blankCols(rest, in+k) - (in + k)
	if sp > 4 {
		sp = 1
	}
	m.width = in + k + sp
	m.first = inner(rest, in+k, sp)
	return m, true
}

// list renders the list that starts at lines[i].
func list(b *strings.Builder, lines []string, i int) int {
	first, _ := listMarker(lines[i])
	var items [][]string
	loose := false
	for i < len(lines) {
		if !sameList(first, lines[i]) {
			break
		}
		m, _ := listMarker(lines[i])
		item := []string{m.first}
		i++
		for i < len(lines) {
			l := lines[i]
			switch {
			case isBlank(l):
				if m.empty && len(item) == 1 {
					// An item that begins with a blank line ends at the second.
					goto done
				}
				item = append(item, "")
			case indent(l) >= m.width:
				item = append(item, inner(l, 0, m.width))
			case !isBlank(item[len(item)-1]) && lazyTarget(item) && !interrupts(l) && !startsItem(l):
				item = append(item, l)
			default:
				goto done
			}
			i++
		}
	done:
		// Blank lines at the end belong between items, not to this one.
		n := len(item)
		for n > 1 && isBlank(item[n-1]) {
			n--
		}
		if n < len(item) {
			if i < len(lines) && sameList(first, lines[i]) {
				loose = true
			} else {
				i -= len(item) - n // the list's last blank lines are its parent's
			}
		}
		item = item[:n]
		if blocks(&strings.Builder{}, item, false, true) {
			loose = true
		}
		items = append(items, item)
	}
	tag := "ul"
	if first.ordered {
		tag = "ol"
	}
	b.WriteString("<" + tag)
	if first.ordered && first.start != 1 {
		b.WriteString(` start="` + strconv.Itoa(first.start) + `"`)
	}
	b.WriteString(">\n")
	for _, item := range items {
		b.WriteString("<li>")
		var inner strings.Builder
		blocks(&inner, item, !loose, true)
		s := inner.String()
		if s != "" && (loose || !startsWithText(item)) {
			b.WriteByte('\n')
		}
		b.WriteString(s)
		b.WriteString("</li>\n")
	}
	b.WriteString("</" + tag + ">\n")
	return i
}

// sameList reports whether l begins an item of the list first began.
func sameList(first marker, l string) bool {
	m, ok := listMarker(l)
	return ok && m.ordered == first.ordered && m.char == first.char && !isBreak(l)
}

func startsItem(l string) bool {
	_, ok := listMarker(l)
	return ok
}

// startsWithText reports whether an item's first block is a paragraph.
func startsWithText(item []string) bool {
	for _, l := range item {
		if isBlank(l) {
			continue
		}
		if indent(l) >= 4 {
			return false
		}
		if interrupts(l) || htmlStart(l, false) > 0 {
			return false
		}
		return true
	}
	return false
}

// paragraph renders the paragraph, or the setext heading or table,
// that starts at lines[i].
func paragraph(b *strings.Builder, lines []string, i int, tight, task bool) (next int, tightText bool) {
	var para []string
	for ; i < len(lines); i++ {
		l := lines[i]
		if isBlank(l) {
			break
		}
		if len(para) > 0 {
			if level := setext(l); level > 0 {
				heading(b, level, strings.TrimSpace(strings.Join(trimLeft(para), "\n")))
				return i + 1, false
			}
			if interrupts(l) {
				break
			}
		}
		para = append(para, l)
	}
	if k, aligns := tableAt(para); aligns != nil {
		if k > 1 {
			text(b, para[:k-1], tight, task)
			if tight {
				b.WriteByte('\n')
			}
		}
		table(b, para[k-1], para[k+1:], aligns)
		return i, false
	}
	text(b, para, tight, task)
	return i, tight
}

func trimLeft(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = strings.TrimLeft(l, " \t")
	}
	return out
}

// text renders a paragraph's lines. In a tight list item it is the text
// alone, and the line break after it is written only if a block follows.
func text(b *strings.Builder, para []string, tight, task bool) {
	s := strings.Join(trimLeft(para), "\n")
	s = strings.TrimRight(s, " \t")
	if tight {
		inlines(b, s, false, task)
		return
	}
	b.WriteString("<p>")
	inlines(b, s, false, task)
	b.WriteString("</p>\n")
}
