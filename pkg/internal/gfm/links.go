package gfm

import (
	"regexp"
	"strings"
	"sync"
)

// The autolinker's expressions are goldmark's, compiled on first use.
var (
	urlExpr = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^(?:http|https|ftp)://[-a-zA-Z0-9@:%._\+~#=]{1,256}\.[a-z]+(?::\d+)?(?:[/#?][-a-zA-Z0-9@:%_+.~#$!?&/=\(\);,'">\^{}\[\]` + "`" + `]*)?`)
	})
	wwwExpr = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^www\.[-a-zA-Z0-9@:%._\+~#=]{1,256}\.[a-z]+(?:[/#?][-a-zA-Z0-9@:%_\+.~#!?&/=\(\);,'">\^{}\[\]` + "`" + `]*)?`)
	})
	domainExpr = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*`)
	})
)

// linkify looks for a bare URL, www. address or email address at s[i],
// after the blank or ( there when consume: GFM's extended autolinks, as
// goldmark finds them. It returns how much it took, 0 for none.
func (p *inliner) linkify(i, start int, consume bool) int {
	if len(p.brackets) > 0 {
		return 0 // not inside a link's text
	}
	s := p.s
	at := i
	if consume {
		at++
	}
	line := s[at:]
	if k := strings.IndexByte(line, '\n'); k >= 0 {
		line = line[:k]
	}
	var m []int
	proto := ""
	email := false
	if strings.HasPrefix(line, "http:") || strings.HasPrefix(line, "https:") || strings.HasPrefix(line, "ftp:") {
		m = urlExpr().FindStringIndex(line)
	}
	if m == nil && strings.HasPrefix(line, "www.") {
		m = wwwExpr().FindStringIndex(line)
		proto = "http://"
	}
	if m != nil && m[0] != 0 {
		m = nil
	}
	if m == nil {
		if line == "" || isPunct(line[0]) {
			return 0
		}
		stop := emailEnd(line)
		if stop < 0 {
			return 0
		}
		a := strings.IndexByte(line, '@')
		if !strings.Contains(line[a:stop-1], ".") {
			return 0
		}
		if line[stop-1] == '.' {
			stop--
		}
		if stop < len(line) && (line[stop] == '-' || line[stop] == '_') {
			return 0
		}
		m = []int{0, stop}
		email = true
	}
	end := m[1]
	if !email {
		end = trimURL(line, end)
	}
	p.text(start, at)
	href := proto + line[:end]
	if email {
		href = "mailto:" + href
	}
	p.q.add(&node{kind: kAuto, s: href, title: line[:end]})
	return at - i + end
}

// trimURL drops the punctuation that ends a sentence rather than a URL,
// and a closing parenthesis that closes none of the URL's.
func trimURL(line string, i int) int {
	opening := strings.Count(line[:i], "(")
	closing := strings.Count(line[:i], ")")
	for i > 1 {
		switch line[i-1] {
		case '?', '!', '.', ',', ':', '*', '_', '~':
			i--
		case ')':
			if closing <= opening {
				return i
			}
			closing--
			i--
		case ';':
			j := i - 2
			for ; j > 0; j-- {
				if !isLetter(line[j]) && !isDigit(line[j]) {
					break
				}
			}
			if j == i-2 || line[j] != '&' {
				return i
			}
			i = j
		default:
			return i
		}
	}
	return i
}

// emailEnd is goldmark's FindEmailIndex: the end of an email address at
// the start of b, or -1.
func emailEnd(b string) int {
	i := 0
	for ; i < len(b) && i < 64 && emailLocal(b[i]); i++ {
	}
	if i == 0 || i >= len(b) || b[i] != '@' {
		return -1
	}
	i++
	if i >= len(b) {
		return -1
	}
	m := domainExpr().FindStringIndex(b[i:min(len(b), i+256)])
	if m == nil || m[1] > 255 {
		return -1
	}
	return i + m[1]
}

func emailLocal(c byte) bool {
	return isLetter(c) || isDigit(c) || strings.IndexByte(".!#$%&'*+/=?^_`{|}~-", c) >= 0
}

// autolink reads <scheme:...> or <address@host> at the start of s.
func autolink(s string) (n int, href string) {
	end := strings.IndexByte(s, '>')
	if end < 0 {
		return 0, ""
	}
	body := s[1:end]
	if k := strings.IndexByte(body, ':'); k >= 2 && k <= 32 && isLetter(body[0]) {
		ok := true
		for _, c := range []byte(body[:k]) {
			if !isLetter(c) && !isDigit(c) && c != '+' && c != '.' && c != '-' {
				ok = false
			}
		}
		for _, c := range []byte(body) {
			if c <= ' ' || c == '<' {
				ok = false
			}
		}
		if ok {
			return end + 1, body
		}
	}
	if a := strings.IndexByte(body, '@'); a > 0 {
		for _, c := range []byte(body[:a]) {
			if !emailLocal(c) {
				return 0, ""
			}
		}
		if m := domainExpr().FindStringIndex(body[a+1:]); m != nil && m[1] == len(body)-a-1 {
			return end + 1, "mailto:" + body
		}
	}
	return 0, ""
}

// rawInline reads an HTML tag, comment, processing instruction,
// declaration or CDATA section at the start of s, returning its length.
func rawInline(s string) int {
	switch {
	case strings.HasPrefix(s, "<!--"):
		if strings.HasPrefix(s, "<!-->") {
			return 5
		}
		if strings.HasPrefix(s, "<!--->") {
			return 6
		}
		if k := strings.Index(s[4:], "-->"); k >= 0 {
			return 4 + k + 3
		}
		return 0
	case strings.HasPrefix(s, "<?"):
		if k := strings.Index(s[2:], "?>"); k >= 0 {
			return 2 + k + 2
		}
		return 0
	case strings.HasPrefix(s, "<![CDATA["):
		if k := strings.Index(s[9:], "]]>"); k >= 0 {
			return 9 + k + 3
		}
		return 0
	case len(s) > 2 && s[1] == '!' && isLetter(s[2]):
		if k := strings.IndexByte(s, '>'); k >= 0 {
			return k + 1
		}
		return 0
	}
	return rawTag(s)
}

// rawTag reads an open or closing tag at the start of s.
func rawTag(s string) int {
	if len(s) < 3 || s[0] != '<' {
		return 0
	}
	i := 1
	closing := s[1] == '/'
	if closing {
		i++
	}
	if i >= len(s) || !isLetter(s[i]) {
		return 0
	}
	for i < len(s) && (isLetter(s[i]) || isDigit(s[i]) || s[i] == '-') {
		i++
	}
	if closing {
		i = skipBlank(s, i)
		if i < len(s) && s[i] == '>' {
			return i + 1
		}
		return 0
	}
	for {
		j := skipBlank(s, i)
		if j < len(s) && s[j] == '>' {
			return j + 1
		}
		if j+1 < len(s) && s[j] == '/' && s[j+1] == '>' {
			return j + 2
		}
		if j == i || j >= len(s) {
			return 0
		}
		// An attribute: its name, then perhaps = and a value.
		if !isLetter(s[j]) && s[j] != '_' && s[j] != ':' {
			return 0
		}
		k := j + 1
		for k < len(s) && (isLetter(s[k]) || isDigit(s[k]) || strings.IndexByte("_.:-", s[k]) >= 0) {
			k++
		}
		v := skipBlank(s, k)
		if v < len(s) && s[v] == '=' {
			v = skipBlank(s, v+1)
			if v >= len(s) {
				return 0
			}
			switch q := s[v]; q {
			case '"', '\'':
				e := strings.IndexByte(s[v+1:], q)
				if e < 0 {
					return 0
				}
				k = v + 1 + e + 1
			default:
				e := v
				for e < len(s) && s[e] > ' ' && strings.IndexByte("\"'=<>`", s[e]) < 0 {
					e++
				}
				if e == v {
					return 0
				}
				k = e
			}
		}
		i = k
	}
}

// skipBlank skips spaces, tabs and line breaks.
func skipBlank(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n') {
		i++
	}
	return i
}
