package gfm

import "strings"

// tableAt finds a table in a paragraph's lines: the first delimiter row
// (at k, after at least one line) and its columns' alignments, nil if
// there is none or the header above it has another number of cells.
func tableAt(para []string) (k int, aligns []string) {
	for k = 1; k < len(para); k++ {
		aligns = delimiterRow(para[k])
		if aligns == nil {
			continue
		}
		if len(cells(para[k-1])) != len(aligns) {
			return 0, nil
		}
		return k, aligns
	}
	return 0, nil
}

// delimiterRow reads |:--|--:| into each column's alignment ("" for none).
func delimiterRow(l string) []string {
	if indent(l) > 3 || strings.Trim(l, "-") == "" || strings.Trim(l, " \t-|:") != "" {
		return nil
	}
	cols := strings.Split(l, "|")
	if isBlank(cols[0]) {
		cols = cols[1:]
	}
	if len(cols) > 0 && isBlank(cols[len(cols)-1]) {
		cols = cols[:len(cols)-1]
	}
	var aligns []string
	for _, c := range cols {
		c = strings.TrimSpace(c)
		left, right := strings.HasPrefix(c, ":"), strings.HasSuffix(c, ":") && len(c) > 1
		dashes := strings.TrimSuffix(strings.TrimPrefix(c, ":"), ":")
		if dashes == "" || strings.Trim(dashes, "-") != "" {
			return nil
		}
		switch {
		case left && right:
			aligns = append(aligns, "center")
		case left:
			aligns = append(aligns, "left")
		case right:
			aligns = append(aligns, "right")
		default:
			aligns = append(aligns, "")
		}
	}
	if aligns == nil {
		aligns = []string{}
	}
	return aligns
}

// cells splits a row at its pipes, those not escaped with a backslash.
func cells(l string) []string {
	l = strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(l), "|"), "|")
	var out []string
	for pos := 0; pos < len(l); {
		end := pos
		for end < len(l) && (l[end] != '|' || end > 0 && l[end-1] == '\\') {
			end++
		}
		out = append(out, strings.TrimSpace(l[pos:end]))
		pos = end + 1
	}
	return out
}

func table(b *strings.Builder, header string, rows []string, aligns []string) {
	b.WriteString("<table>\n<thead>\n<tr>\n")
	for i, c := range cells(header) {
		cell(b, "th", c, aligns, i)
	}
	b.WriteString("</tr>\n</thead>\n")
	if len(rows) > 0 {
		b.WriteString("<tbody>\n")
		for _, r := range rows {
			b.WriteString("<tr>\n")
			cs := cells(r)
			for i := range aligns {
				if i < len(cs) {
					cell(b, "td", cs[i], aligns, i)
				} else {
					b.WriteString("<td></td>\n") // a cell the row lacks has no alignment
				}
			}
			b.WriteString("</tr>\n")
		}
		b.WriteString("</tbody>\n")
	}
	b.WriteString("</table>\n")
}

func cell(b *strings.Builder, tag, text string, aligns []string, i int) {
	b.WriteString("<" + tag)
	if i < len(aligns) && aligns[i] != "" {
		b.WriteString(` style="text-align:` + aligns[i] + `"`)
	}
	b.WriteString(">")
	inlines(b, text, true, false)
	b.WriteString("</" + tag + ">\n")
}
