// Package openapi checks HTTP requests and responses against a subset of
// GitHub's OpenAPI 3.0 description (see ../../testdata/README.md for how the
// subset is made).
//
// It understands what the subset uses: path templates, path and query
// parameters, JSON request and response bodies, and a JSON-schema subset
// (type, nullable, enum, required, properties, additionalProperties, items,
// oneOf, anyOf, allOf, min/max items, length and value, pattern, and the
// date-time and uri formats). Schema $refs point into components.schemas.
package openapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// Spec is a loaded OpenAPI description.
type Spec struct {
	Info struct {
		Version string `json:"version"`
		Source  string `json:"source"`
	} `json:"info"`
	Paths      map[string]map[string]*Operation `json:"paths"`
	Components struct {
		Schemas map[string]*Schema `json:"schemas"`
	} `json:"components"`

	templates []template
	reMu      sync.Mutex
	reCache   map[string]*regexp.Regexp
}

// Operation is one method on one path.
type Operation struct {
	OperationID string              `json:"operationId"`
	Parameters  []Parameter         `json:"parameters"`
	RequestBody *RequestBody        `json:"requestBody"`
	Responses   map[string]Response `json:"responses"`
}

// Parameter is a path or query parameter.
type Parameter struct {
	Name     string  `json:"name"`
	In       string  `json:"in"`
	Required bool    `json:"required"`
	Schema   *Schema `json:"schema"`
}

// RequestBody is an operation's JSON request body.
type RequestBody struct {
	Required bool    `json:"required"`
	Schema   *Schema `json:"schema"`
}

// Response is one declared response status.
type Response struct {
	Schema  *Schema  `json:"schema"`
	Headers []string `json:"headers"`
}

// Schema is the JSON-schema subset that OpenAPI 3.0 uses.
type Schema struct {
	Ref                  string             `json:"$ref"`
	Type                 string             `json:"type"`
	Format               string             `json:"format"`
	Nullable             bool               `json:"nullable"`
	Enum                 []any              `json:"enum"`
	Required             []string           `json:"required"`
	Properties           map[string]*Schema `json:"properties"`
	AdditionalProperties json.RawMessage    `json:"additionalProperties"`
	Items                *Schema            `json:"items"`
	OneOf                []*Schema          `json:"oneOf"`
	AnyOf                []*Schema          `json:"anyOf"`
	AllOf                []*Schema          `json:"allOf"`
	MinItems             *int               `json:"minItems"`
	MaxItems             *int               `json:"maxItems"`
	MinLength            *int               `json:"minLength"`
	MaxLength            *int               `json:"maxLength"`
	Minimum              *float64           `json:"minimum"`
	Maximum              *float64           `json:"maximum"`
	Pattern              string             `json:"pattern"`
}

type template struct {
	path     string
	segments []string
	literals int
}

// Load parses a subset written by extract-openapi.mjs.
func Load(data []byte) (*Spec, error) {
	s := &Spec{reCache: map[string]*regexp.Regexp{}}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(s); err != nil {
		return nil, fmt.Errorf("openapi description: %w", err)
	}
	for p := range s.Paths {
		segs := strings.Split(strings.TrimPrefix(p, "/"), "/")
		lit := 0
		for _, seg := range segs {
			if !isParam(seg) {
				lit++
			}
		}
		s.templates = append(s.templates, template{path: p, segments: segs, literals: lit})
	}
	// Literal segments win over parameters, as in GitHub's router.
	slices.SortFunc(s.templates, func(a, b template) int {
		if a.literals != b.literals {
			return b.literals - a.literals
		}
		return strings.Compare(a.path, b.path)
	})
	return s, nil
}

func isParam(seg string) bool { return strings.HasPrefix(seg, "{") && strings.HasSuffix(seg, "}") }

// Match finds the path template that matches an (unescaped) URL path, and the
// values of its path parameters. A trailing {path} parameter takes the rest of
// the URL path, slashes included, as in the contents API.
func (s *Spec) Match(urlPath string) (tmpl string, params map[string]string, ok bool) {
	segs := strings.Split(strings.TrimPrefix(urlPath, "/"), "/")
	for _, t := range s.templates {
		if p, ok := matchSegments(t.segments, segs); ok {
			return t.path, p, true
		}
	}
	return "", nil, false
}

func matchSegments(tmpl, segs []string) (map[string]string, bool) {
	params := map[string]string{}
	for i, ts := range tmpl {
		if i >= len(segs) {
			return nil, false
		}
		if !isParam(ts) {
			if ts != segs[i] {
				return nil, false
			}
			continue
		}
		name := ts[1 : len(ts)-1]
		if name == "path" && i == len(tmpl)-1 {
			params[name] = strings.Join(segs[i:], "/")
			return params, params[name] != ""
		}
		if segs[i] == "" {
			return nil, false
		}
		params[name] = segs[i]
	}
	return params, len(tmpl) == len(segs)
}

// Operation returns the operation for a method and path template.
func (s *Spec) Operation(method, tmpl string) (*Operation, bool) {
	op, ok := s.Paths[tmpl][strings.ToLower(method)]
	return op, ok
}

// Operations lists "METHOD /template" for every operation, sorted.
func (s *Spec) Operations() []string {
	var out []string
	for p, ops := range s.Paths {
		for m := range ops {
			out = append(out, strings.ToUpper(m)+" "+p)
		}
	}
	slices.Sort(out)
	return out
}

// ValidateRequest checks a request's path, query and JSON body. It returns one
// line per problem found, or nil.
func (s *Spec) ValidateRequest(method string, u *url.URL, contentType string, body []byte) []string {
	tmpl, pathParams, ok := s.Match(u.Path)
	if !ok {
		return []string{fmt.Sprintf("no path template matches %s", u.Path)}
	}
	op, ok := s.Operation(method, tmpl)
	if !ok {
		return []string{fmt.Sprintf("%s %s is not declared", method, tmpl)}
	}
	var probs []string
	query := u.Query()
	declared := map[string]bool{}
	for _, p := range op.Parameters {
		switch p.In {
		case "path":
			v, ok := pathParams[p.Name]
			if !ok && p.Required {
				probs = append(probs, fmt.Sprintf("path parameter %q missing", p.Name))
				continue
			}
			probs = append(probs, s.checkParam("path parameter "+p.Name, p.Schema, v)...)
		case "query":
			declared[p.Name] = true
			vs, ok := query[p.Name]
			if !ok {
				if p.Required {
					probs = append(probs, fmt.Sprintf("query parameter %q missing", p.Name))
				}
				continue
			}
			for _, v := range vs {
				probs = append(probs, s.checkParam("query parameter "+p.Name, p.Schema, v)...)
			}
		}
	}
	for name := range query {
		if !declared[name] {
			probs = append(probs, fmt.Sprintf("query parameter %q is not declared", name))
		}
	}
	slices.Sort(probs)

	switch {
	case op.RequestBody == nil:
		if len(bytes.TrimSpace(body)) > 0 {
			probs = append(probs, "request has a body but the operation declares none")
		}
	case len(bytes.TrimSpace(body)) == 0:
		if op.RequestBody.Required {
			probs = append(probs, "request body required")
		}
	default:
		if !strings.Contains(contentType, "json") {
			probs = append(probs, fmt.Sprintf("request content type %q, want JSON", contentType))
		}
		v, err := decode(body)
		if err != nil {
			probs = append(probs, fmt.Sprintf("request body: %v", err))
		} else if op.RequestBody.Schema != nil {
			probs = append(probs, s.Validate(op.RequestBody.Schema, v, "request body")...)
		}
	}
	return probs
}

// ValidateResponse checks a response's status, declared headers and JSON body
// against the operation that the request matched. global lists statuses that
// GitHub may send from any operation without declaring them (authentication,
// permissions, rate limits, server errors); their bodies are checked against
// components.schemas["basic-error"] when present.
func (s *Spec) ValidateResponse(method, urlPath string, status int, header http.Header, body []byte, global []int) []string {
	tmpl, _, ok := s.Match(urlPath)
	if !ok {
		return []string{fmt.Sprintf("no path template matches %s", urlPath)}
	}
	op, ok := s.Operation(method, tmpl)
	if !ok {
		return []string{fmt.Sprintf("%s %s is not declared", method, tmpl)}
	}
	resp, declared := op.Responses[strconv.Itoa(status)]
	if !declared {
		if !slices.Contains(global, status) {
			return []string{fmt.Sprintf("status %d is not declared for %s %s", status, method, tmpl)}
		}
		resp = Response{Schema: &Schema{Ref: "#/components/schemas/basic-error"}}
		if _, ok := s.Components.Schemas["basic-error"]; !ok {
			resp.Schema = nil
		}
	}
	var probs []string
	for _, h := range resp.Headers {
		if strings.EqualFold(h, "location") && header.Get("Location") == "" {
			probs = append(probs, fmt.Sprintf("status %d must carry a Location header", status))
		}
	}
	if resp.Schema == nil {
		return probs
	}
	if len(bytes.TrimSpace(body)) == 0 {
		if declared {
			probs = append(probs, fmt.Sprintf("status %d declares a JSON body but the response has none", status))
		}
		return probs
	}
	if ct := header.Get("Content-Type"); !strings.Contains(ct, "json") {
		return append(probs, fmt.Sprintf("response content type %q, want JSON", ct))
	}
	v, err := decode(body)
	if err != nil {
		return append(probs, fmt.Sprintf("response body: %v", err))
	}
	return append(probs, s.Validate(resp.Schema, v, "response body")...)
}

func decode(body []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("trailing data after JSON value")
	}
	return v, nil
}

// checkParam checks a path or query value. Parameter formats are not checked:
// GitHub declares "created" as date-time although it takes ">=2024-01-01".
func (s *Spec) checkParam(where string, sch *Schema, v string) []string {
	sch = s.resolve(sch)
	if sch == nil {
		return nil
	}
	var val any = v
	switch sch.Type {
	case "integer":
		if _, err := strconv.ParseInt(v, 10, 64); err != nil {
			return []string{fmt.Sprintf("%s: %q is not an integer", where, v)}
		}
		val = json.Number(v)
	case "number":
		if _, err := strconv.ParseFloat(v, 64); err != nil {
			return []string{fmt.Sprintf("%s: %q is not a number", where, v)}
		}
		val = json.Number(v)
	case "boolean":
		b, err := strconv.ParseBool(v)
		if err != nil || (v != "true" && v != "false") {
			return []string{fmt.Sprintf("%s: %q is not true or false", where, v)}
		}
		val = b
	}
	noFormat := *sch
	noFormat.Format = ""
	return s.Validate(&noFormat, val, where)
}

func (s *Spec) resolve(sch *Schema) *Schema {
	for i := 0; sch != nil && sch.Ref != "" && i < 32; i++ {
		name, ok := strings.CutPrefix(sch.Ref, "#/components/schemas/")
		if !ok {
			return nil
		}
		sch = s.Components.Schemas[name]
	}
	return sch
}

// Validate checks a decoded JSON value (numbers as json.Number) against a
// schema and returns one line per problem, each starting with where.
func (s *Spec) Validate(sch *Schema, v any, where string) []string {
	var probs []string
	s.validate(sch, v, where, &probs, 0)
	return probs
}

const maxDepth = 64

func (s *Spec) validate(sch *Schema, v any, where string, probs *[]string, depth int) {
	if depth > maxDepth {
		*probs = append(*probs, where+": schema nesting too deep")
		return
	}
	if sch == nil {
		return
	}
	if sch.Ref != "" {
		r := s.resolve(sch)
		if r == nil {
			*probs = append(*probs, fmt.Sprintf("%s: unresolved $ref %s", where, sch.Ref))
			return
		}
		sch = r
	}
	if v == nil {
		if sch.Nullable || sch.Type == "" && len(sch.OneOf)+len(sch.AnyOf)+len(sch.AllOf) == 0 {
			return
		}
		// A composed schema may allow null through one of its branches.
		if sch.Type == "" && s.composedAllowsNull(sch) {
			return
		}
		*probs = append(*probs, where+": null is not allowed")
		return
	}
	for i, sub := range sch.AllOf {
		s.validate(sub, v, fmt.Sprintf("%s(allOf[%d])", where, i), probs, depth+1)
	}
	if len(sch.AnyOf) > 0 {
		var first []string
		ok := false
		for _, sub := range sch.AnyOf {
			var p []string
			s.validate(sub, v, where, &p, depth+1)
			if len(p) == 0 {
				ok = true
				break
			}
			if first == nil {
				first = p
			}
		}
		if !ok {
			*probs = append(*probs, fmt.Sprintf("%s: matches none of anyOf (first: %s)", where, strings.Join(first, "; ")))
		}
	}
	if len(sch.OneOf) > 0 {
		matched := 0
		var first []string
		for _, sub := range sch.OneOf {
			var p []string
			s.validate(sub, v, where, &p, depth+1)
			if len(p) == 0 {
				matched++
			} else if first == nil {
				first = p
			}
		}
		switch {
		case matched == 0:
			*probs = append(*probs, fmt.Sprintf("%s: matches none of oneOf (first: %s)", where, strings.Join(first, "; ")))
		case matched > 1:
			*probs = append(*probs, fmt.Sprintf("%s: matches %d branches of oneOf, want exactly 1", where, matched))
		}
	}
	if len(sch.Enum) > 0 && !inEnum(sch.Enum, v) {
		*probs = append(*probs, fmt.Sprintf("%s: %v is not one of %v", where, v, sch.Enum))
	}
	switch sch.Type {
	case "":
		// Any type: the composition keywords above did the checking.
	case "object":
		obj, ok := v.(map[string]any)
		if !ok {
			*probs = append(*probs, fmt.Sprintf("%s: %s, want object", where, kind(v)))
			return
		}
		s.validateObject(sch, obj, where, probs, depth)
	case "array":
		arr, ok := v.([]any)
		if !ok {
			*probs = append(*probs, fmt.Sprintf("%s: %s, want array", where, kind(v)))
			return
		}
		if sch.MinItems != nil && len(arr) < *sch.MinItems {
			*probs = append(*probs, fmt.Sprintf("%s: %d items, want at least %d", where, len(arr), *sch.MinItems))
		}
		if sch.MaxItems != nil && len(arr) > *sch.MaxItems {
			*probs = append(*probs, fmt.Sprintf("%s: %d items, want at most %d", where, len(arr), *sch.MaxItems))
		}
		for i, item := range arr {
			s.validate(sch.Items, item, fmt.Sprintf("%s[%d]", where, i), probs, depth+1)
		}
	case "string":
		str, ok := v.(string)
		if !ok {
			*probs = append(*probs, fmt.Sprintf("%s: %s, want string", where, kind(v)))
			return
		}
		n := utf8.RuneCountInString(str)
		if sch.MinLength != nil && n < *sch.MinLength {
			*probs = append(*probs, fmt.Sprintf("%s: %d characters, want at least %d", where, n, *sch.MinLength))
		}
		if sch.MaxLength != nil && n > *sch.MaxLength {
			*probs = append(*probs, fmt.Sprintf("%s: %d characters, want at most %d", where, n, *sch.MaxLength))
		}
		if re := s.regexp(sch.Pattern); re != nil && !re.MatchString(str) {
			*probs = append(*probs, fmt.Sprintf("%s: %q does not match %s", where, str, sch.Pattern))
		}
		switch sch.Format {
		case "date-time":
			if _, err := time.Parse(time.RFC3339, str); err != nil {
				*probs = append(*probs, fmt.Sprintf("%s: %q is not an RFC 3339 date-time", where, str))
			}
		case "uri":
			if u, err := url.Parse(str); err != nil || u.Scheme == "" {
				*probs = append(*probs, fmt.Sprintf("%s: %q is not an absolute URI", where, str))
			}
		}
	case "integer", "number":
		num, ok := v.(json.Number)
		if !ok {
			*probs = append(*probs, fmt.Sprintf("%s: %s, want %s", where, kind(v), sch.Type))
			return
		}
		if sch.Type == "integer" {
			if _, err := strconv.ParseInt(num.String(), 10, 64); err != nil {
				*probs = append(*probs, fmt.Sprintf("%s: %s is not an integer", where, num))
				return
			}
		}
		f, _ := num.Float64()
		if sch.Minimum != nil && f < *sch.Minimum {
			*probs = append(*probs, fmt.Sprintf("%s: %s is below %v", where, num, *sch.Minimum))
		}
		if sch.Maximum != nil && f > *sch.Maximum {
			*probs = append(*probs, fmt.Sprintf("%s: %s is above %v", where, num, *sch.Maximum))
		}
	case "boolean":
		if _, ok := v.(bool); !ok {
			*probs = append(*probs, fmt.Sprintf("%s: %s, want boolean", where, kind(v)))
		}
	default:
		*probs = append(*probs, fmt.Sprintf("%s: unknown schema type %q", where, sch.Type))
	}
}

func (s *Spec) composedAllowsNull(sch *Schema) bool {
	for _, sub := range append(append([]*Schema{}, sch.OneOf...), sch.AnyOf...) {
		if r := s.resolve(sub); r != nil && r.Nullable {
			return true
		}
	}
	return false
}

func (s *Spec) validateObject(sch *Schema, obj map[string]any, where string, probs *[]string, depth int) {
	for _, name := range sch.Required {
		if _, ok := obj[name]; !ok {
			*probs = append(*probs, fmt.Sprintf("%s: required property %q missing", where, name))
		}
	}
	var extra *Schema
	forbidExtra := false
	if ap := bytes.TrimSpace(sch.AdditionalProperties); len(ap) > 0 {
		switch string(ap) {
		case "false":
			forbidExtra = true
		case "true":
		default:
			extra = new(Schema)
			if err := json.Unmarshal(ap, extra); err != nil {
				*probs = append(*probs, fmt.Sprintf("%s: bad additionalProperties: %v", where, err))
				extra = nil
			}
		}
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		sub := where + "." + k
		if ps, ok := sch.Properties[k]; ok {
			s.validate(ps, obj[k], sub, probs, depth+1)
			continue
		}
		switch {
		case forbidExtra:
			*probs = append(*probs, fmt.Sprintf("%s: property is not allowed", sub))
		case extra != nil:
			s.validate(extra, obj[k], sub, probs, depth+1)
		}
	}
}

func (s *Spec) regexp(pattern string) *regexp.Regexp {
	if pattern == "" {
		return nil
	}
	s.reMu.Lock()
	defer s.reMu.Unlock()
	if re, ok := s.reCache[pattern]; ok {
		return re
	}
	// ECMA-262 patterns that RE2 cannot compile are skipped, not failed.
	re, err := regexp.Compile(pattern)
	if err != nil {
		re = nil
	}
	s.reCache[pattern] = re
	return re
}

func inEnum(enum []any, v any) bool {
	for _, e := range enum {
		switch ev := e.(type) {
		case json.Number:
			if n, ok := v.(json.Number); ok {
				a, _ := ev.Float64()
				b, _ := n.Float64()
				if a == b {
					return true
				}
			}
		case float64:
			if n, ok := v.(json.Number); ok {
				if b, _ := n.Float64(); b == ev {
					return true
				}
			}
		default:
			if e == v {
				return true
			}
		}
	}
	return false
}

func kind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case string:
		return "string"
	case json.Number:
		return "number"
	case bool:
		return "boolean"
	default:
		return fmt.Sprintf("%T", v)
	}
}
