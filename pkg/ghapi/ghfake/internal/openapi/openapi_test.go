package openapi

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const testSpec = `{
 "openapi": "3.0.3",
 "info": {"version": "test"},
 "paths": {
  "/repos/{owner}/{repo}/issues/{issue_number}": {"patch": {
   "parameters": [
    {"name": "owner", "in": "path", "required": true, "schema": {"type": "string"}},
    {"name": "repo", "in": "path", "required": true, "schema": {"type": "string"}},
    {"name": "issue_number", "in": "path", "required": true, "schema": {"type": "integer"}}
   ],
   "requestBody": {"required": true, "schema": {"$ref": "#/components/schemas/edit"}},
   "responses": {"200": {"schema": {"$ref": "#/components/schemas/thing"}}}
  }},
  "/repos/{owner}/{repo}/issues/comments": {"get": {
   "parameters": [
    {"name": "owner", "in": "path", "required": true, "schema": {"type": "string"}},
    {"name": "repo", "in": "path", "required": true, "schema": {"type": "string"}},
    {"name": "per_page", "in": "query", "schema": {"type": "integer"}},
    {"name": "sort", "in": "query", "schema": {"type": "string", "enum": ["created", "updated"]}},
    {"name": "all", "in": "query", "schema": {"type": "boolean"}}
   ],
   "responses": {"200": {"schema": {"type": "array", "items": {"$ref": "#/components/schemas/thing"}}}}
  }},
  "/repos/{owner}/{repo}/contents/{path}": {"get": {
   "parameters": [
    {"name": "owner", "in": "path", "required": true, "schema": {"type": "string"}},
    {"name": "repo", "in": "path", "required": true, "schema": {"type": "string"}},
    {"name": "path", "in": "path", "required": true, "schema": {"type": "string"}},
    {"name": "ref", "in": "query", "required": true, "schema": {"type": "string"}}
   ],
   "responses": {"200": {"schema": {"oneOf": [{"$ref": "#/components/schemas/file"}, {"$ref": "#/components/schemas/dir"}]}},
                 "302": {"headers": ["Location"]}}
  }}
 },
 "components": {"schemas": {
  "basic-error": {"type": "object", "properties": {"message": {"type": "string"}}},
  "edit": {"type": "object", "required": ["title"], "additionalProperties": false, "properties": {
   "title": {"type": "string", "maxLength": 5},
   "state": {"type": "string", "enum": ["open", "closed"]},
   "labels": {"type": "array", "maxItems": 2, "items": {"oneOf": [{"type": "string"}, {"type": "object", "properties": {"name": {"type": "string"}}}]}},
   "milestone": {"oneOf": [{"type": "string"}, {"type": "integer"}], "nullable": true}
  }},
  "thing": {"type": "object", "required": ["id", "user", "created_at", "url"], "properties": {
   "id": {"type": "integer", "minimum": 1},
   "user": {"$ref": "#/components/schemas/nullable-user"},
   "created_at": {"type": "string", "format": "date-time"},
   "url": {"type": "string", "format": "uri"},
   "score": {"type": "number"},
   "meta": {"type": "object", "additionalProperties": {"type": "integer"}},
   "kind": {"allOf": [{"type": "string"}, {"enum": ["a", "b"]}]},
   "any": {"anyOf": [{"type": "boolean"}, {"type": "integer"}]}
  }},
  "nullable-user": {"type": "object", "nullable": true, "required": ["login"], "properties": {"login": {"type": "string", "pattern": "^[a-z]+$"}}},
  "file": {"type": "object", "required": ["type"], "properties": {"type": {"type": "string", "enum": ["file"]}}},
  "dir": {"type": "array", "items": {"type": "object"}}
 }}
}`

func load(t *testing.T) *Spec {
	t.Helper()
	s, err := Load([]byte(testSpec))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestMatch(t *testing.T) {
	s := load(t)
	tests := []struct {
		path     string
		wantTmpl string
		want     map[string]string
	}{
		{"/repos/o/r/issues/12", "/repos/{owner}/{repo}/issues/{issue_number}", map[string]string{"owner": "o", "repo": "r", "issue_number": "12"}},
		{"/repos/o/r/issues/comments", "/repos/{owner}/{repo}/issues/comments", map[string]string{"owner": "o", "repo": "r"}},
		{"/repos/o/r/contents/.github/ledger.yml", "/repos/{owner}/{repo}/contents/{path}", map[string]string{"owner": "o", "repo": "r", "path": ".github/ledger.yml"}},
		{"/repos/o/r/contents", "", nil},
		{"/repos/o/r/issues/12/extra", "", nil},
	}
	for _, tc := range tests {
		tmpl, params, _ := s.Match(tc.path)
		if tmpl != tc.wantTmpl {
			t.Errorf("Match(%s) template = %q, want %q", tc.path, tmpl, tc.wantTmpl)
		}
		if diff := cmp.Diff(tc.want, params); diff != "" {
			t.Errorf("Match(%s) params (-want +got):\n%s", tc.path, diff)
		}
	}
}

func TestValidateRequest(t *testing.T) {
	s := load(t)
	tests := []struct {
		name, method, url, body string
		want                    []string // substrings, one per problem, in order
	}{
		{"ok", "PATCH", "/repos/o/r/issues/1", `{"title":"t","labels":["a",{"name":"b"}],"milestone":null}`, nil},
		{"path param type", "PATCH", "/repos/o/r/issues/x", `{"title":"t"}`, []string{`path parameter issue_number: "x" is not an integer`}},
		{"missing body", "PATCH", "/repos/o/r/issues/1", ``, []string{"request body required"}},
		{"required property", "PATCH", "/repos/o/r/issues/1", `{"state":"open"}`, []string{`required property "title" missing`}},
		{"extra property", "PATCH", "/repos/o/r/issues/1", `{"title":"t","bogus":1}`, []string{"request body.bogus: property is not allowed"}},
		{"enum", "PATCH", "/repos/o/r/issues/1", `{"title":"t","state":"merged"}`, []string{"merged is not one of"}},
		{"maxLength", "PATCH", "/repos/o/r/issues/1", `{"title":"toolong"}`, []string{"7 characters, want at most 5"}},
		{"maxItems", "PATCH", "/repos/o/r/issues/1", `{"title":"t","labels":["a","b","c"]}`, []string{"3 items, want at most 2"}},
		{"oneOf none", "PATCH", "/repos/o/r/issues/1", `{"title":"t","labels":[true]}`, []string{"matches none of oneOf"}},
		{"not JSON", "PATCH", "/repos/o/r/issues/1", `{"title":`, []string{"request body: unexpected EOF"}},
		{"wrong method", "GET", "/repos/o/r/issues/1", ``, []string{"GET /repos/{owner}/{repo}/issues/{issue_number} is not declared"}},
		{"query ok", "GET", "/repos/o/r/issues/comments?per_page=100&sort=created&all=true", ``, nil},
		{"query problems", "GET", "/repos/o/r/issues/comments?per_page=x&sort=size&all=yes&direction=asc", ``, []string{
			`query parameter "direction" is not declared`, `query parameter all: "yes" is not true or false`,
			`query parameter per_page: "x" is not an integer`, `query parameter sort: size is not one of`,
		}},
		{"required query", "GET", "/repos/o/r/contents/a/b", ``, []string{`query parameter "ref" missing`}},
		{"body on GET", "GET", "/repos/o/r/issues/comments", `{}`, []string{"request has a body"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			u, _ := url.Parse(tc.url)
			got := s.ValidateRequest(tc.method, u, "application/json", []byte(tc.body))
			checkProblems(t, got, tc.want)
		})
	}
}

func TestValidateResponse(t *testing.T) {
	s := load(t)
	const thing = `{"id":1,"user":{"login":"octo"},"created_at":"2025-01-02T03:04:05Z","url":"https://x/y"}`
	json := http.Header{"Content-Type": {"application/json"}}
	tests := []struct {
		name, method, path string
		status             int
		header             http.Header
		body               string
		want               []string
	}{
		{"ok", "PATCH", "/repos/o/r/issues/1", 200, json, thing, nil},
		{"null user allowed", "PATCH", "/repos/o/r/issues/1", 200, json, `{"id":1,"user":null,"created_at":"2025-01-02T03:04:05Z","url":"https://x"}`, nil},
		{"missing id", "PATCH", "/repos/o/r/issues/1", 200, json, `{"user":null,"created_at":"2025-01-02T03:04:05Z","url":"https://x"}`, []string{`required property "id" missing`}},
		{"types and formats", "PATCH", "/repos/o/r/issues/1", 200, json,
			`{"id":0,"user":{"login":"Octo"},"created_at":"yesterday","url":"/relative","score":"high","meta":{"a":"b"},"kind":"c","any":"s"}`,
			[]string{
				"response body.any: matches none of anyOf", "response body.created_at: \"yesterday\" is not an RFC 3339 date-time",
				"response body.id: 0 is below 1", "response body.kind(allOf[1]): c is not one of",
				"response body.meta.a: string, want integer", "response body.score: string, want number",
				"response body.url: \"/relative\" is not an absolute URI", "response body.user.login: \"Octo\" does not match",
			}},
		{"undeclared status", "PATCH", "/repos/o/r/issues/1", 418, json, `{}`, []string{"status 418 is not declared"}},
		{"global status", "PATCH", "/repos/o/r/issues/1", 503, json, `{"message":"down"}`, nil},
		{"global status bad body", "PATCH", "/repos/o/r/issues/1", 503, json, `{"message":5}`, []string{"message: number, want string"}},
		{"oneOf exactly one", "GET", "/repos/o/r/contents/a", 200, json, `{"type":"file"}`, nil},
		{"oneOf array branch", "GET", "/repos/o/r/contents/a", 200, json, `[{}]`, nil},
		{"oneOf none", "GET", "/repos/o/r/contents/a", 200, json, `{"type":"dir"}`, []string{"matches none of oneOf"}},
		{"302 needs Location", "GET", "/repos/o/r/contents/a", 302, http.Header{}, ``, []string{"must carry a Location header"}},
		{"302 with Location", "GET", "/repos/o/r/contents/a", 302, http.Header{"Location": {"https://blob"}}, ``, nil},
		{"not JSON content type", "PATCH", "/repos/o/r/issues/1", 200, http.Header{"Content-Type": {"text/html"}}, thing, []string{`content type "text/html"`}},
		{"missing body", "PATCH", "/repos/o/r/issues/1", 200, json, ``, []string{"declares a JSON body"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := s.ValidateResponse(tc.method, tc.path, tc.status, tc.header, []byte(tc.body), []int{401, 403, 404, 429, 500, 502, 503, 504})
			checkProblems(t, got, tc.want)
		})
	}
}

func checkProblems(t *testing.T, got, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("problems = %q, want %d matching %q", got, len(want), want)
	}
	for i := range want {
		if !strings.Contains(got[i], want[i]) {
			t.Errorf("problem %d = %q, want it to contain %q", i, got[i], want[i])
		}
	}
}
