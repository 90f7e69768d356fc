package ghfake

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// Platform limits the fake enforces as GitHub does.
const (
	maxPerPage            = 100   // GitHub: per_page "max 100"
	defaultPerPage        = 30    // GitHub: per_page "default 30"
	maxFilteredRuns       = 1000  // GitHub: "up to 1,000 results for each search" when runs are filtered
	maxPullFiles          = 3000  // GitHub: PR files "include a maximum of 3000 files"
	maxCommentChars       = 65536 // GitHub: "Body is too long (maximum is 65536 characters)"
	maxAnnotations        = 50    // GitHub: "limits the number of annotations to a maximum of 50 per API request"
	maxAnnotationTitle    = 255   // GitHub: annotation title "The maximum size is 255 characters"
	maxAnnotationMessage  = 64 * 1024
	maxCheckText          = 65535 // GitHub: output summary and text maxLength 65535
	maxStatusDescription  = 140   // GitHub: "description is too long (maximum is 140 characters)"
	actionsBotLogin       = "github-actions[bot]"
	resourceNotAccessible = "Resource not accessible by integration"
)

// route is one REST operation the fake serves. The list must match the
// operations in testdata/openapi-subset.json (TestRoutesMatchSubset).
type route struct {
	method, template string
	handle           func(s *Server, w http.ResponseWriter, r *http.Request, st *repoState, body []byte)
}

var routes = []route{
	{"GET", "/repos/{owner}/{repo}/actions/runs", (*Server).listRepoRuns},
	{"GET", "/repos/{owner}/{repo}/actions/workflows/{workflow_id}/runs", (*Server).listWorkflowRuns},
	{"GET", "/repos/{owner}/{repo}/actions/runs/{run_id}", (*Server).getRun},
	{"GET", "/repos/{owner}/{repo}/actions/runs/{run_id}/attempts/{attempt_number}", (*Server).getRunAttempt},
	{"GET", "/repos/{owner}/{repo}/actions/runs/{run_id}/artifacts", (*Server).listRunArtifacts},
	{"GET", "/repos/{owner}/{repo}/actions/artifacts", (*Server).listRepoArtifacts},
	{"GET", "/repos/{owner}/{repo}/actions/artifacts/{artifact_id}", (*Server).getArtifact},
	{"GET", "/repos/{owner}/{repo}/actions/artifacts/{artifact_id}/{archive_format}", (*Server).downloadArtifact},
	{"GET", "/repos/{owner}/{repo}/pulls", (*Server).listPulls},
	{"GET", "/repos/{owner}/{repo}/pulls/{pull_number}", (*Server).getPull},
	{"GET", "/repos/{owner}/{repo}/pulls/{pull_number}/files", (*Server).listPullFiles},
	{"GET", "/repos/{owner}/{repo}/commits/{commit_sha}/pulls", (*Server).listCommitPulls},
	{"GET", "/repos/{owner}/{repo}/issues/{issue_number}/comments", (*Server).listComments},
	{"POST", "/repos/{owner}/{repo}/issues/{issue_number}/comments", (*Server).createComment},
	{"PATCH", "/repos/{owner}/{repo}/issues/comments/{comment_id}", (*Server).editComment},
	{"DELETE", "/repos/{owner}/{repo}/issues/comments/{comment_id}", (*Server).deleteComment},
	{"GET", "/repos/{owner}/{repo}/issues", (*Server).listIssues},
	{"POST", "/repos/{owner}/{repo}/issues", (*Server).createIssue},
	{"PATCH", "/repos/{owner}/{repo}/issues/{issue_number}", (*Server).editIssue},
	{"POST", "/repos/{owner}/{repo}/check-runs", (*Server).createCheckRun},
	{"PATCH", "/repos/{owner}/{repo}/check-runs/{check_run_id}", (*Server).updateCheckRun},
	{"GET", "/repos/{owner}/{repo}/contents/{path}", (*Server).getContents},
	{"POST", "/repos/{owner}/{repo}/statuses/{sha}", (*Server).createStatus},
	{"GET", "/user", (*Server).getAuthenticatedUser},
}

// Routes lists "METHOD /template" for every REST operation the fake serves.
func Routes() []string {
	out := make([]string, 0, len(routes))
	for _, rt := range routes {
		out = append(out, rt.method+" "+rt.template)
	}
	slices.Sort(out)
	return out
}

var (
	muxOnce sync.Once
	apiMux  *http.ServeMux
)

// serveAPI answers the REST API.
func (s *Server) serveAPI(w http.ResponseWriter, r *http.Request) {
	s.serve(HostAPI, w, r, s.handleAPI)
}

type ctxBody struct{}

func (s *Server) handleAPI(w http.ResponseWriter, r *http.Request, body []byte) {
	muxOnce.Do(func() {
		apiMux = http.NewServeMux()
		for _, rt := range routes {
			pattern := rt.method + " " + strings.Replace(rt.template, "{path}", "{path...}", 1)
			apiMux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
				srv := r.Context().Value(ctxServer{}).(*Server)
				srv.mu.Lock()
				defer srv.mu.Unlock()
				var st *repoState // nil for routes outside a repository (GET /user)
				if strings.HasPrefix(rt.template, "/repos/") {
					if st = srv.repo(r.PathValue("owner"), r.PathValue("repo")); st == nil {
						writeError(w, http.StatusNotFound, "Not Found", "")
						return
					}
				}
				rt.handle(srv, w, r, st, r.Context().Value(ctxBody{}).([]byte))
			})
		}
	})

	w.Header().Set("X-GitHub-Api-Version-Selected", "2022-11-28")
	tok := bearer(r.Header.Get("Authorization"))
	s.mu.Lock()
	readOnly, known := s.tokens[tok]
	s.mu.Unlock()
	if !known {
		writeError(w, http.StatusUnauthorized, "Bad credentials", docsBase)
		return
	}
	if !s.spendRate(w) {
		writeError(w, http.StatusForbidden, "API rate limit exceeded for installation ID 4242. If you reach out to GitHub Support for help, please include the request ID 0000:FAKE.", docsPrimaryRate)
		return
	}
	if readOnly && r.Method != http.MethodGet && r.Method != http.MethodHead {
		writeError(w, http.StatusForbidden, resourceNotAccessible, docsBase)
		return
	}
	ctx := contextWith(r.Context(), s, body)
	apiMux.ServeHTTP(w, r.WithContext(ctx))
}

// spendRate takes one request from the primary budget and sets the rate
// headers; false when the budget is spent.
func (s *Server) spendRate(w http.ResponseWriter) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rollRate()
	ok := s.rateUsed < s.rateLimit
	if ok {
		s.rateUsed++
	}
	s.rateHeaders(w.Header(), time.Time{})
	return ok
}

// rollRate starts a new primary window once the last one has reset. The
// caller holds s.mu.
func (s *Server) rollRate() {
	if now := s.now(); !now.Before(s.rateReset) {
		s.rateUsed = 0
		s.rateReset = now.Add(time.Hour).Truncate(time.Second)
	}
}

// rateHeaders sets the primary window's x-ratelimit-* headers, with reset
// in place of the window's reset when it is not zero. GitHub sends them on
// every answer of the REST API, secondary-limit 403s and 429s included. The
// caller holds s.mu.
func (s *Server) rateHeaders(h http.Header, reset time.Time) {
	if reset.IsZero() {
		reset = s.rateReset
	}
	h.Set("X-Ratelimit-Limit", strconv.Itoa(s.rateLimit))
	h.Set("X-Ratelimit-Remaining", strconv.Itoa(s.rateLimit-s.rateUsed))
	h.Set("X-Ratelimit-Used", strconv.Itoa(s.rateUsed))
	h.Set("X-Ratelimit-Reset", strconv.FormatInt(reset.Unix(), 10))
	h.Set("X-Ratelimit-Resource", "core")
}

// RateRemaining is what is left of the fake's primary rate limit.
func (s *Server) RateRemaining() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rateLimit - s.rateUsed
}

// page cuts one page out of n items and sets the Link header.
func (s *Server) page(w http.ResponseWriter, r *http.Request, n int) (lo, hi int) {
	q := r.URL.Query()
	per, err := strconv.Atoi(q.Get("per_page"))
	if err != nil || per <= 0 {
		per = defaultPerPage
	}
	per = min(per, maxPerPage)
	pg, err := strconv.Atoi(q.Get("page"))
	if err != nil || pg <= 0 {
		pg = 1
	}
	last := max(1, (n+per-1)/per)
	at := func(p int) string {
		q.Set("page", strconv.Itoa(p))
		q.Set("per_page", strconv.Itoa(per))
		return fmt.Sprintf("<%s%s?%s>", s.apiBase, r.URL.EscapedPath(), q.Encode())
	}
	var links []string
	if pg < last {
		links = append(links, at(pg+1)+`; rel="next"`, at(last)+`; rel="last"`)
	}
	if pg > 1 {
		links = append(links, at(1)+`; rel="first"`, at(min(pg-1, last))+`; rel="prev"`)
	}
	if len(links) > 0 {
		w.Header().Set("Link", strings.Join(links, ", "))
	}
	lo = min((pg-1)*per, n)
	return lo, min(lo+per, n)
}

// created answers 201 with the new resource and its Location, as GitHub does.
func created(w http.ResponseWriter, o obj) {
	if u, ok := o["url"].(string); ok {
		w.Header().Set("Location", u)
	}
	writeJSON(w, http.StatusCreated, o)
}

func pathInt(r *http.Request, name string) (int64, bool) {
	v, err := strconv.ParseInt(r.PathValue(name), 10, 64)
	return v, err == nil
}

func notFound(w http.ResponseWriter) { writeError(w, http.StatusNotFound, "Not Found", "") }

func validationFailed(w http.ResponseWriter, resource, field, message string) {
	writeJSON(w, http.StatusUnprocessableEntity, obj{
		"message": "Validation Failed", "documentation_url": docsBase,
		"errors": []any{obj{"resource": resource, "code": "custom", "field": field, "message": message}},
	})
}

func decodeBody(w http.ResponseWriter, body []byte, v any) bool {
	if err := json.Unmarshal(body, v); err != nil {
		writeError(w, http.StatusBadRequest, "Problems parsing JSON", "")
		return false
	}
	return true
}

// --- workflow runs and artifacts ---

func (s *Server) listRepoRuns(w http.ResponseWriter, r *http.Request, st *repoState, _ []byte) {
	s.listRuns(w, r, st, "")
}

func (s *Server) listWorkflowRuns(w http.ResponseWriter, r *http.Request, st *repoState, _ []byte) {
	wf := r.PathValue("workflow_id")
	if id, err := strconv.ParseInt(wf, 10, 64); err == nil {
		wf = ""
		for file, wid := range st.workflows {
			if wid == id {
				wf = file
			}
		}
	} else if _, ok := st.workflows[path.Base(wf)]; ok {
		wf = path.Base(wf)
	} else {
		wf = ""
	}
	if wf == "" {
		notFound(w)
		return
	}
	s.listRuns(w, r, st, wf)
}

func (s *Server) listRuns(w http.ResponseWriter, r *http.Request, st *repoState, workflow string) {
	q := r.URL.Query()
	created := func(time.Time) bool { return true }
	if c := q.Get("created"); c != "" {
		var err error
		if created, err = parseCreated(c); err != nil {
			validationFailed(w, "WorkflowRun", "created", err.Error())
			return
		}
	}
	filtered := false
	for _, k := range []string{"actor", "branch", "check_suite_id", "created", "event", "head_sha", "status"} {
		filtered = filtered || q.Get(k) != ""
	}
	var runs []*Run
	for _, run := range st.runs {
		switch {
		case workflow != "" && run.Workflow != workflow,
			q.Get("actor") != "" && q.Get("actor") != run.Actor,
			q.Get("branch") != "" && q.Get("branch") != run.HeadBranch,
			q.Get("event") != "" && q.Get("event") != run.Event,
			q.Get("head_sha") != "" && q.Get("head_sha") != run.HeadSHA,
			q.Get("status") != "" && q.Get("status") != run.Status && q.Get("status") != run.Conclusion,
			q.Get("check_suite_id") != "" && q.Get("check_suite_id") != strconv.FormatInt(run.ID+1, 10),
			!created(run.CreatedAt):
			continue
		}
		runs = append(runs, run)
	}
	sort.SliceStable(runs, func(i, j int) bool {
		if !runs[i].CreatedAt.Equal(runs[j].CreatedAt) {
			return runs[i].CreatedAt.After(runs[j].CreatedAt)
		}
		return runs[i].ID > runs[j].ID
	})
	if filtered && len(runs) > maxFilteredRuns {
		runs = runs[:maxFilteredRuns]
	}
	lo, hi := s.page(w, r, len(runs))
	items := []any{}
	for _, run := range runs[lo:hi] {
		items = append(items, s.runJSON(st, run, run.Attempts))
	}
	writeJSON(w, http.StatusOK, obj{"total_count": len(runs), "workflow_runs": items})
}

// parseCreated understands GitHub's date qualifiers: >=D, >D, <=D, <D,
// A..B (either side may be *), and a bare date (that whole day, UTC).
func parseCreated(v string) (func(time.Time) bool, error) {
	parse := func(s string) (time.Time, bool, error) {
		if t, err := time.Parse(time.RFC3339, s); err == nil {
			return t, false, nil
		}
		t, err := time.Parse("2006-01-02", s)
		if err != nil {
			return time.Time{}, false, fmt.Errorf("created %q: not a date", v)
		}
		return t, true, nil
	}
	dayEnd := func(t time.Time, isDay bool) time.Time {
		if isDay {
			return t.Add(24*time.Hour - time.Nanosecond)
		}
		return t
	}
	for _, op := range []string{">=", "<=", ">", "<"} {
		rest, ok := strings.CutPrefix(v, op)
		if !ok {
			continue
		}
		t, day, err := parse(rest)
		if err != nil {
			return nil, err
		}
		switch op {
		case ">=":
			return func(c time.Time) bool { return !c.Before(t) }, nil
		case ">":
			end := dayEnd(t, day)
			return func(c time.Time) bool { return c.After(end) }, nil
		case "<=":
			end := dayEnd(t, day)
			return func(c time.Time) bool { return !c.After(end) }, nil
		default:
			return func(c time.Time) bool { return c.Before(t) }, nil
		}
	}
	if a, b, ok := strings.Cut(v, ".."); ok {
		lo, hi := time.Time{}, time.Unix(1<<40, 0)
		if a != "*" {
			t, _, err := parse(a)
			if err != nil {
				return nil, err
			}
			lo = t
		}
		if b != "*" {
			t, day, err := parse(b)
			if err != nil {
				return nil, err
			}
			hi = dayEnd(t, day)
		}
		return func(c time.Time) bool { return !c.Before(lo) && !c.After(hi) }, nil
	}
	t, day, err := parse(v)
	if err != nil {
		return nil, err
	}
	end := dayEnd(t, day)
	return func(c time.Time) bool { return !c.Before(t) && !c.After(end) }, nil
}

func (st *repoState) run(id int64) *Run {
	for _, run := range st.runs {
		if run.ID == id {
			return run
		}
	}
	return nil
}

func (s *Server) getRun(w http.ResponseWriter, r *http.Request, st *repoState, _ []byte) {
	id, _ := pathInt(r, "run_id")
	run := st.run(id)
	if run == nil {
		notFound(w)
		return
	}
	writeJSON(w, http.StatusOK, s.runJSON(st, run, run.Attempts))
}

func (s *Server) getRunAttempt(w http.ResponseWriter, r *http.Request, st *repoState, _ []byte) {
	id, _ := pathInt(r, "run_id")
	n, _ := pathInt(r, "attempt_number")
	run := st.run(id)
	if run == nil || n < 1 || n > int64(run.Attempts) {
		notFound(w)
		return
	}
	writeJSON(w, http.StatusOK, s.runJSON(st, run, int(n)))
}

func (s *Server) listRunArtifacts(w http.ResponseWriter, r *http.Request, st *repoState, _ []byte) {
	id, _ := pathInt(r, "run_id")
	if st.run(id) == nil {
		notFound(w)
		return
	}
	name := r.URL.Query().Get("name")
	var arts []*artifactState
	for _, a := range st.artifacts {
		if a.RunID == id && (name == "" || a.Name == name) {
			arts = append(arts, a)
		}
	}
	lo, hi := s.page(w, r, len(arts))
	items := []any{}
	for _, a := range arts[lo:hi] {
		items = append(items, s.artifactJSON(st, a))
	}
	writeJSON(w, http.StatusOK, obj{"total_count": len(arts), "artifacts": items})
}

// listRepoArtifacts answers GET /repos/{o}/{r}/actions/artifacts: the
// repository's artifacts, newest first (by creation, then id), expired ones
// included, each with its workflow_run. name filters by the exact name, as
// GitHub does.
func (s *Server) listRepoArtifacts(w http.ResponseWriter, r *http.Request, st *repoState, _ []byte) {
	name := r.URL.Query().Get("name")
	var arts []*artifactState
	for _, a := range st.artifacts {
		if name == "" || a.Name == name {
			arts = append(arts, a)
		}
	}
	sort.SliceStable(arts, func(i, j int) bool {
		if !arts[i].CreatedAt.Equal(arts[j].CreatedAt) {
			return arts[i].CreatedAt.After(arts[j].CreatedAt)
		}
		return arts[i].ID > arts[j].ID
	})
	lo, hi := s.page(w, r, len(arts))
	items := []any{}
	for _, a := range arts[lo:hi] {
		items = append(items, s.artifactJSON(st, a))
	}
	writeJSON(w, http.StatusOK, obj{"total_count": len(arts), "artifacts": items})
}

func (st *repoState) artifact(id int64) *artifactState {
	for _, a := range st.artifacts {
		if a.ID == id {
			return a
		}
	}
	return nil
}

func (s *Server) getArtifact(w http.ResponseWriter, r *http.Request, st *repoState, _ []byte) {
	id, _ := pathInt(r, "artifact_id")
	a := st.artifact(id)
	if a == nil {
		notFound(w)
		return
	}
	writeJSON(w, http.StatusOK, s.artifactJSON(st, a))
}

func (s *Server) downloadArtifact(w http.ResponseWriter, r *http.Request, st *repoState, _ []byte) {
	id, _ := pathInt(r, "artifact_id")
	a := st.artifact(id)
	if a == nil || r.PathValue("archive_format") != "zip" {
		notFound(w)
		return
	}
	if a.Expired {
		writeError(w, http.StatusGone, "Artifact has expired", docsBase)
		return
	}
	// An unarchived artifact's blob is named as its file is, not .zip.
	ext := ".zip"
	if a.Raw != nil {
		ext = ""
	}
	w.Header().Set("Location", s.signBlobURL(fmt.Sprintf("/artifacts/%s/%d%s", st.fullName(), a.ID, ext), "r"))
	w.WriteHeader(http.StatusFound)
}

// --- pull requests ---

func (s *Server) listPulls(w http.ResponseWriter, r *http.Request, st *repoState, _ []byte) {
	q := r.URL.Query()
	state := q.Get("state")
	if state == "" {
		state = "open"
	}
	var prs []*PullRequest
	for _, pr := range st.pulls {
		headRepo := pr.HeadRepo
		if headRepo == "" {
			headRepo = st.fullName()
		}
		headOwner, _, _ := strings.Cut(headRepo, "/")
		switch {
		case state != "all" && pr.State != state,
			q.Get("base") != "" && q.Get("base") != pr.BaseRef,
			q.Get("head") != "" && q.Get("head") != headOwner+":"+pr.HeadRef:
			continue
		}
		prs = append(prs, pr)
	}
	desc := q.Get("direction") != "asc"
	sort.Slice(prs, func(i, j int) bool {
		if desc {
			return prs[i].Number > prs[j].Number
		}
		return prs[i].Number < prs[j].Number
	})
	lo, hi := s.page(w, r, len(prs))
	items := []any{}
	for _, pr := range prs[lo:hi] {
		items = append(items, s.prJSON(st, pr, false))
	}
	writeJSON(w, http.StatusOK, items)
}

func (s *Server) getPull(w http.ResponseWriter, r *http.Request, st *repoState, _ []byte) {
	n, _ := pathInt(r, "pull_number")
	pr := st.pulls[int(n)]
	if pr == nil {
		notFound(w)
		return
	}
	writeJSON(w, http.StatusOK, s.prJSON(st, pr, true))
}

func (s *Server) listPullFiles(w http.ResponseWriter, r *http.Request, st *repoState, _ []byte) {
	n, _ := pathInt(r, "pull_number")
	pr := st.pulls[int(n)]
	if pr == nil {
		notFound(w)
		return
	}
	files := pr.Files
	if len(files) > maxPullFiles {
		files = files[:maxPullFiles]
	}
	lo, hi := s.page(w, r, len(files))
	items := []any{}
	for _, f := range files[lo:hi] {
		items = append(items, s.fileJSON(st, pr, f))
	}
	writeJSON(w, http.StatusOK, items)
}

// SetCommitPullsOmitForks makes GET /commits/{sha}/pulls leave out pull
// requests from forks, so that a client must fall back to listing pull
// requests and matching head.sha.
func (r *Repo) SetCommitPullsOmitForks(omit bool) {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	r.state().commitPullsOmitForks = omit
}

func (s *Server) listCommitPulls(w http.ResponseWriter, r *http.Request, st *repoState, _ []byte) {
	sha := r.PathValue("commit_sha")
	var prs []*PullRequest
	for _, pr := range st.pulls {
		fork := pr.HeadRepo != "" && !strings.EqualFold(pr.HeadRepo, st.fullName())
		if pr.HeadSHA == sha && !(fork && st.commitPullsOmitForks) {
			prs = append(prs, pr)
		}
	}
	sort.Slice(prs, func(i, j int) bool { return prs[i].Number > prs[j].Number })
	lo, hi := s.page(w, r, len(prs))
	items := []any{}
	for _, pr := range prs[lo:hi] {
		items = append(items, s.prJSON(st, pr, false))
	}
	writeJSON(w, http.StatusOK, items)
}

// --- issues and comments ---

func (st *repoState) hasIssue(n int) bool {
	_, isIssue := st.issues[n]
	_, isPR := st.pulls[n]
	return isIssue || isPR
}

func (s *Server) listComments(w http.ResponseWriter, r *http.Request, st *repoState, _ []byte) {
	n, _ := pathInt(r, "issue_number")
	if !st.hasIssue(int(n)) {
		notFound(w)
		return
	}
	var since time.Time
	if v := r.URL.Query().Get("since"); v != "" {
		since, _ = time.Parse(time.RFC3339, v)
	}
	var cs []*Comment
	for _, c := range st.comments {
		if c.Issue == int(n) && !c.UpdatedAt.Before(since) {
			cs = append(cs, c)
		}
	}
	lo, hi := s.page(w, r, len(cs))
	items := []any{}
	for _, c := range cs[lo:hi] {
		items = append(items, s.commentJSON(st, c))
	}
	writeJSON(w, http.StatusOK, items)
}

func commentBodyOK(w http.ResponseWriter, body *string) bool {
	switch {
	case body == nil || *body == "":
		validationFailed(w, "IssueComment", "body", "Body cannot be blank")
		return false
	case utf8.RuneCountInString(*body) > maxCommentChars:
		validationFailed(w, "IssueComment", "body", fmt.Sprintf("Body is too long (maximum is %d characters)", maxCommentChars))
		return false
	}
	return true
}

func (s *Server) createComment(w http.ResponseWriter, r *http.Request, st *repoState, body []byte) {
	n, _ := pathInt(r, "issue_number")
	if !st.hasIssue(int(n)) {
		notFound(w)
		return
	}
	var in struct {
		Body *string `json:"body"`
	}
	if !decodeBody(w, body, &in) || !commentBodyOK(w, in.Body) {
		return
	}
	now := s.now().UTC().Truncate(time.Second)
	user, bot := s.author(r)
	c := &Comment{ID: s.newID(), Issue: int(n), Body: *in.Body, User: user, Bot: bot, CreatedAt: now, UpdatedAt: now}
	st.comments = append(st.comments, c)
	created(w, s.commentJSON(st, c))
}

func (s *Server) editComment(w http.ResponseWriter, r *http.Request, st *repoState, body []byte) {
	id, _ := pathInt(r, "comment_id")
	var c *Comment
	for _, x := range st.comments {
		if x.ID == id {
			c = x
		}
	}
	if c == nil {
		notFound(w)
		return
	}
	var in struct {
		Body *string `json:"body"`
	}
	if !decodeBody(w, body, &in) || !commentBodyOK(w, in.Body) {
		return
	}
	c.Body = *in.Body
	c.UpdatedAt = s.now().UTC().Truncate(time.Second)
	writeJSON(w, http.StatusOK, s.commentJSON(st, c))
}

// deleteComment answers 204 with no body, as GitHub does; 404 for a
// comment that is not there (or no longer).
func (s *Server) deleteComment(w http.ResponseWriter, r *http.Request, st *repoState, _ []byte) {
	id, _ := pathInt(r, "comment_id")
	i := slices.IndexFunc(st.comments, func(c *Comment) bool { return c.ID == id })
	if i < 0 {
		notFound(w)
		return
	}
	st.comments = slices.Delete(st.comments, i, i+1)
	w.WriteHeader(http.StatusNoContent)
}

// --- the authenticated user ---

// docsAuthenticatedUser is the documentation link of GET /user's errors.
const docsAuthenticatedUser = "https://docs.github.com/rest/users/users#get-the-authenticated-user"

// getAuthenticatedUser answers GET /user: the owner of a personal access
// token, in the public view (user_view_type "public"), or, for a
// GITHUB_TOKEN-like token, 403 "Resource not accessible by integration", as
// GitHub answers an installation token.
func (s *Server) getAuthenticatedUser(w http.ResponseWriter, r *http.Request, _ *repoState, _ []byte) {
	login, ok := s.owners[bearer(r.Header.Get("Authorization"))]
	if !ok {
		writeError(w, http.StatusForbidden, resourceNotAccessible, docsAuthenticatedUser)
		return
	}
	writeJSON(w, http.StatusOK, s.publicUserJSON(login))
}

func (s *Server) listIssues(w http.ResponseWriter, r *http.Request, st *repoState, _ []byte) {
	q := r.URL.Query()
	state := q.Get("state")
	if state == "" {
		state = "open"
	}
	var labels []string
	if l := q.Get("labels"); l != "" {
		labels = strings.Split(l, ",")
	}
	type entry struct {
		is *Issue
		pr *PullRequest
	}
	var list []entry
	for _, is := range st.issues {
		list = append(list, entry{is: is})
	}
	for _, pr := range st.pulls {
		list = append(list, entry{is: &Issue{Number: pr.Number, Title: pr.Title, Body: pr.Body, State: pr.State, Labels: pr.Labels, User: pr.User, CreatedAt: s.now(), UpdatedAt: s.now()}, pr: pr})
	}
	var out []entry
	for _, e := range list {
		ok := state == "all" || e.is.State == state
		ok = ok && (q.Get("creator") == "" || q.Get("creator") == e.is.User)
		for _, l := range labels {
			ok = ok && slices.Contains(e.is.Labels, strings.TrimSpace(l))
		}
		if ok {
			out = append(out, e)
		}
	}
	// GitHub: sort created (default), updated or comments; direction desc
	// (default) or asc. The fake has no comment counts: comments sorts as
	// created. Ties go by number.
	asc := q.Get("direction") == "asc"
	byUpdated := q.Get("sort") == "updated"
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i].is, out[j].is
		if asc {
			a, b = b, a
		}
		if byUpdated && !a.UpdatedAt.Equal(b.UpdatedAt) {
			return a.UpdatedAt.After(b.UpdatedAt)
		}
		return a.Number > b.Number
	})
	lo, hi := s.page(w, r, len(out))
	items := []any{}
	for _, e := range out[lo:hi] {
		items = append(items, s.issueJSON(st, e.is, e.pr))
	}
	writeJSON(w, http.StatusOK, items)
}

type issueInput struct {
	Title  *string            `json:"title"`
	Body   *string            `json:"body"`
	State  *string            `json:"state"`
	Labels *[]json.RawMessage `json:"labels"`
}

func labelNames(raw *[]json.RawMessage) []string {
	if raw == nil {
		return nil
	}
	var out []string
	for _, l := range *raw {
		var name string
		if json.Unmarshal(l, &name) == nil {
			out = append(out, name)
			continue
		}
		var o struct {
			Name string `json:"name"`
		}
		if json.Unmarshal(l, &o) == nil && o.Name != "" {
			out = append(out, o.Name)
		}
	}
	return out
}

func (s *Server) createIssue(w http.ResponseWriter, r *http.Request, st *repoState, body []byte) {
	var in issueInput
	if !decodeBody(w, body, &in) {
		return
	}
	if in.Title == nil || *in.Title == "" {
		validationFailed(w, "Issue", "title", "title wasn't supplied")
		return
	}
	if in.Body != nil && utf8.RuneCountInString(*in.Body) > maxCommentChars {
		validationFailed(w, "Issue", "body", fmt.Sprintf("body is too long (maximum is %d characters)", maxCommentChars))
		return
	}
	user, _ := s.author(r)
	is := Issue{Title: *in.Title, User: user, Labels: labelNames(in.Labels)}
	if in.Body != nil {
		is.Body = *in.Body
	}
	added := st.addIssue(s, is)
	created(w, s.issueJSON(st, st.issues[added.Number], nil))
}

func (s *Server) editIssue(w http.ResponseWriter, r *http.Request, st *repoState, body []byte) {
	n, _ := pathInt(r, "issue_number")
	is := st.issues[int(n)]
	if is == nil {
		notFound(w)
		return
	}
	var in issueInput
	if !decodeBody(w, body, &in) {
		return
	}
	if in.Body != nil && utf8.RuneCountInString(*in.Body) > maxCommentChars {
		validationFailed(w, "Issue", "body", fmt.Sprintf("body is too long (maximum is %d characters)", maxCommentChars))
		return
	}
	if in.Title != nil {
		is.Title = *in.Title
	}
	if in.Body != nil {
		is.Body = *in.Body
	}
	if in.State != nil {
		if *in.State != "open" && *in.State != "closed" {
			validationFailed(w, "Issue", "state", "state is not included in the list")
			return
		}
		is.State = *in.State
	}
	if in.Labels != nil {
		is.Labels = labelNames(in.Labels)
	}
	is.UpdatedAt = s.now()
	writeJSON(w, http.StatusOK, s.issueJSON(st, is, nil))
}

// --- check runs ---

type checkRunInput struct {
	Name       *string `json:"name"`
	HeadSHA    *string `json:"head_sha"`
	DetailsURL *string `json:"details_url"`
	ExternalID *string `json:"external_id"`
	Status     *string `json:"status"`
	Conclusion *string `json:"conclusion"`
	Output     *struct {
		Title       *string `json:"title"`
		Summary     *string `json:"summary"`
		Text        *string `json:"text"`
		Annotations []struct {
			Path            string `json:"path"`
			StartLine       int    `json:"start_line"`
			EndLine         int    `json:"end_line"`
			AnnotationLevel string `json:"annotation_level"`
			Message         string `json:"message"`
			Title           string `json:"title"`
			RawDetails      string `json:"raw_details"`
		} `json:"annotations"`
	} `json:"output"`
}

// applyCheckRun validates and applies a create or update; false when it
// answered an error.
func (s *Server) applyCheckRun(w http.ResponseWriter, c *CheckRun, in *checkRunInput) bool {
	if in.Name != nil {
		c.Name = *in.Name
	}
	if in.DetailsURL != nil {
		c.DetailsURL = *in.DetailsURL
	}
	if in.ExternalID != nil {
		c.ExternalID = *in.ExternalID
	}
	if in.Status != nil {
		c.Status = *in.Status
	}
	if in.Conclusion != nil {
		c.Conclusion = *in.Conclusion
		c.Status = "completed"
	}
	if c.Status == "completed" && c.Conclusion == "" {
		validationFailed(w, "CheckRun", "conclusion", "conclusion is required when status is completed")
		return false
	}
	if o := in.Output; o != nil {
		if o.Title == nil || o.Summary == nil {
			validationFailed(w, "CheckRun", "output", "output requires title and summary")
			return false
		}
		if utf8.RuneCountInString(*o.Summary) > maxCheckText || (o.Text != nil && utf8.RuneCountInString(*o.Text) > maxCheckText) {
			validationFailed(w, "CheckRun", "output", fmt.Sprintf("summary and text are limited to %d characters", maxCheckText))
			return false
		}
		if len(o.Annotations) > maxAnnotations {
			validationFailed(w, "CheckRun", "annotations", fmt.Sprintf("at most %d annotations per request", maxAnnotations))
			return false
		}
		c.Title, c.Summary = *o.Title, *o.Summary
		if o.Text != nil {
			c.Text = *o.Text
		}
		for _, a := range o.Annotations {
			if utf8.RuneCountInString(a.Title) > maxAnnotationTitle || len(a.Message) > maxAnnotationMessage || len(a.RawDetails) > maxAnnotationMessage {
				validationFailed(w, "CheckRun", "annotations", "annotation title is limited to 255 characters and message and raw_details to 64 KB")
				return false
			}
			c.Annotations = append(c.Annotations, Annotation{
				Path: a.Path, StartLine: a.StartLine, EndLine: a.EndLine, Level: a.AnnotationLevel,
				Message: a.Message, Title: a.Title, RawDetails: a.RawDetails,
			})
		}
	}
	c.Writes++
	return true
}

func (s *Server) createCheckRun(w http.ResponseWriter, r *http.Request, st *repoState, body []byte) {
	var in checkRunInput
	if !decodeBody(w, body, &in) {
		return
	}
	if in.Name == nil || *in.Name == "" || in.HeadSHA == nil || *in.HeadSHA == "" {
		validationFailed(w, "CheckRun", "name", "name and head_sha are required")
		return
	}
	c := &CheckRun{ID: s.newID(), HeadSHA: *in.HeadSHA, Status: "queued"}
	if !s.applyCheckRun(w, c, &in) {
		return
	}
	st.checkRuns = append(st.checkRuns, c)
	created(w, s.checkRunJSON(st, c))
}

func (s *Server) updateCheckRun(w http.ResponseWriter, r *http.Request, st *repoState, body []byte) {
	id, _ := pathInt(r, "check_run_id")
	var c *CheckRun
	for _, x := range st.checkRuns {
		if x.ID == id {
			c = x
		}
	}
	if c == nil {
		notFound(w)
		return
	}
	var in checkRunInput
	if !decodeBody(w, body, &in) {
		return
	}
	next := *c
	next.Annotations = slices.Clone(c.Annotations)
	if !s.applyCheckRun(w, &next, &in) {
		return
	}
	*c = next
	writeJSON(w, http.StatusOK, s.checkRunJSON(st, c))
}

// --- contents and statuses ---

func (s *Server) getContents(w http.ResponseWriter, r *http.Request, st *repoState, _ []byte) {
	ref := r.URL.Query().Get("ref")
	if ref == "" {
		ref = st.defaultBranch
	}
	p := strings.Trim(r.PathValue("path"), "/")
	content, ok := st.files[ref][p]
	if !ok {
		notFound(w)
		return
	}
	writeJSON(w, http.StatusOK, s.contentJSON(st, ref, p, content))
}

func (s *Server) createStatus(w http.ResponseWriter, r *http.Request, st *repoState, body []byte) {
	var in struct {
		State       string  `json:"state"`
		TargetURL   *string `json:"target_url"`
		Description *string `json:"description"`
		Context     *string `json:"context"`
	}
	if !decodeBody(w, body, &in) {
		return
	}
	x := &Status{ID: s.newID(), SHA: r.PathValue("sha"), State: in.State, Context: "default"}
	if !slices.Contains([]string{"error", "failure", "pending", "success"}, in.State) {
		validationFailed(w, "Status", "state", "state is not included in the list")
		return
	}
	if in.Description != nil {
		if utf8.RuneCountInString(*in.Description) > maxStatusDescription {
			validationFailed(w, "Status", "description", fmt.Sprintf("description is too long (maximum is %d characters)", maxStatusDescription))
			return
		}
		x.Description = *in.Description
	}
	if in.TargetURL != nil {
		x.TargetURL = *in.TargetURL
	}
	if in.Context != nil && *in.Context != "" {
		x.Context = *in.Context
	}
	st.statuses = append(st.statuses, x)
	created(w, s.statusJSON(st, x))
}

// signBlobURL returns a blob URL signed for perm ("r" read, "cw" create and
// write) that expires after the signed-URL TTL. Call with s.mu held.
func (s *Server) signBlobURL(p, perm string) string {
	exp := s.now().Add(s.signedURLTTL).Unix()
	q := url.Values{}
	q.Set("sv", "2021-12-02")
	q.Set("sp", perm)
	q.Set("se", strconv.FormatInt(exp, 10))
	q.Set("sig", s.signature(p, perm, exp))
	return s.BlobURL + p + "?" + q.Encode()
}
