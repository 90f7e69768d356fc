package ghfake

import (
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"maps"
	"strings"
	"time"
)

// The JSON builders below produce every property that GitHub's OpenAPI
// description marks as required, with GitHub's URL shapes.

type obj = map[string]any

func ts(t time.Time) string { return t.UTC().Format(time.RFC3339) }

func nodeID(kind string, id int64) string {
	return base64.RawURLEncoding.EncodeToString([]byte(fmt.Sprintf("%s:%d", kind, id)))
}

func sha256Digest(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// gitBlobSHA is the git object id of a blob with this content.
func gitBlobSHA(b []byte) string {
	h := sha1.New()
	fmt.Fprintf(h, "blob %d\x00", len(b))
	h.Write(b)
	return hex.EncodeToString(h.Sum(nil))
}

func (s *Server) userJSON(login string, bot bool) obj {
	id := stableID("user:" + login)
	u := s.apiBase + "/users/" + login
	typ := "User"
	if bot {
		typ = "Bot"
	}
	return obj{
		"login": login, "id": id, "node_id": nodeID("User", id),
		"avatar_url": "https://avatars.githubusercontent.com/u/" + fmt.Sprint(id), "gravatar_id": "",
		"url": u, "html_url": s.htmlBase + "/" + login,
		"followers_url": u + "/followers", "following_url": u + "/following{/other_user}",
		"gists_url": u + "/gists{/gist_id}", "starred_url": u + "/starred{/owner}{/repo}",
		"subscriptions_url": u + "/subscriptions", "organizations_url": u + "/orgs",
		"repos_url": u + "/repos", "events_url": u + "/events{/privacy}",
		"received_events_url": u + "/received_events", "type": typ, "site_admin": false,
	}
}

// publicUserJSON is a user as GET /user shows it without access to the
// private profile (public-user).
func (s *Server) publicUserJSON(login string) obj {
	u := s.userJSON(login, false)
	joined := ts(time.Date(2011, 1, 25, 18, 44, 36, 0, time.UTC))
	profile := obj{
		"user_view_type": "public", "name": nil, "company": nil, "blog": "", "location": nil,
		"email": nil, "hireable": nil, "bio": nil, "public_repos": 0, "public_gists": 0,
		"followers": 0, "following": 0, "created_at": joined, "updated_at": joined,
	}
	maps.Copy(u, profile)
	return u
}

var repoURLTemplates = [][2]string{
	{"archive_url", "/{archive_format}{/ref}"}, {"assignees_url", "/assignees{/user}"},
	{"blobs_url", "/git/blobs{/sha}"}, {"branches_url", "/branches{/branch}"},
	{"collaborators_url", "/collaborators{/collaborator}"}, {"comments_url", "/comments{/number}"},
	{"commits_url", "/commits{/sha}"}, {"compare_url", "/compare/{base}...{head}"},
	{"contents_url", "/contents/{+path}"}, {"contributors_url", "/contributors"},
	{"deployments_url", "/deployments"}, {"downloads_url", "/downloads"}, {"events_url", "/events"},
	{"forks_url", "/forks"}, {"git_commits_url", "/git/commits{/sha}"}, {"git_refs_url", "/git/refs{/sha}"},
	{"git_tags_url", "/git/tags{/sha}"}, {"hooks_url", "/hooks"},
	{"issue_comment_url", "/issues/comments{/number}"}, {"issue_events_url", "/issues/events{/number}"},
	{"issues_url", "/issues{/number}"}, {"keys_url", "/keys{/key_id}"}, {"labels_url", "/labels{/name}"},
	{"languages_url", "/languages"}, {"merges_url", "/merges"}, {"milestones_url", "/milestones{/number}"},
	{"notifications_url", "/notifications{?since,all,participating}"}, {"pulls_url", "/pulls{/number}"},
	{"releases_url", "/releases{/id}"}, {"stargazers_url", "/stargazers"}, {"statuses_url", "/statuses/{sha}"},
	{"subscribers_url", "/subscribers"}, {"subscription_url", "/subscription"}, {"tags_url", "/tags"},
	{"teams_url", "/teams"}, {"trees_url", "/git/trees{/sha}"},
}

// minimalRepoJSON describes any repository by name; repositories the fake
// does not hold (fork heads) get a stable id.
func (s *Server) minimalRepoJSON(fullName string) obj {
	owner, name, _ := strings.Cut(fullName, "/")
	id := stableID(fullName)
	fork := false
	if st := s.repo(owner, name); st != nil {
		id = st.id
	} else {
		fork = true
	}
	u := s.apiBase + "/repos/" + fullName
	o := obj{
		"id": id, "node_id": nodeID("Repository", id), "name": name, "full_name": fullName,
		"owner": s.userJSON(owner, false), "private": false, "html_url": s.htmlBase + "/" + fullName,
		"description": nil, "fork": fork, "url": u,
	}
	for _, t := range repoURLTemplates {
		o[t[0]] = u + t[1]
	}
	return o
}

func (s *Server) repoJSON(fullName string) obj {
	o := s.minimalRepoJSON(fullName)
	epoch := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	for k, v := range (obj{
		"clone_url": s.htmlBase + "/" + fullName + ".git", "default_branch": "main",
		"forks": 0, "forks_count": 0, "git_url": "git://github.com/" + fullName + ".git",
		"has_downloads": true, "has_issues": true, "has_projects": false, "has_wiki": false, "has_pages": false,
		"homepage": nil, "language": "Go", "archived": false, "disabled": false, "mirror_url": nil,
		"open_issues": 0, "open_issues_count": 0, "license": nil, "pushed_at": ts(epoch), "size": 100,
		"ssh_url": "git@github.com:" + fullName + ".git", "stargazers_count": 0, "svn_url": s.htmlBase + "/" + fullName,
		"watchers": 0, "watchers_count": 0, "created_at": ts(epoch), "updated_at": ts(epoch),
		"visibility": "public",
	}) {
		o[k] = v
	}
	return o
}

func (s *Server) runURL(st *repoState, id int64) string {
	return fmt.Sprintf("%s/repos/%s/actions/runs/%d", s.apiBase, st.fullName(), id)
}

// runJSON describes a run as of one attempt.
func (s *Server) runJSON(st *repoState, run *Run, attempt int) obj {
	u := s.runURL(st, run.ID)
	conclusion := run.Conclusion
	status := run.Status
	if attempt < run.Attempts {
		status = "completed"
		conclusion = "failure"
		if attempt-1 < len(run.AttemptConclusions) && run.AttemptConclusions[attempt-1] != "" {
			conclusion = run.AttemptConclusions[attempt-1]
		}
	}
	started := run.CreatedAt.Add(time.Duration(attempt-1) * 10 * time.Minute)
	var concl any = conclusion
	if conclusion == "" {
		concl = nil
	}
	prs := []any{}
	for _, n := range run.PullRequests {
		if pr := st.pulls[n]; pr != nil {
			prs = append(prs, s.prMinimalJSON(st, pr))
		}
	}
	wfID := st.workflows[run.Workflow]
	var prev any
	if attempt > 1 {
		prev = fmt.Sprintf("%s/attempts/%d", u, attempt-1)
	}
	return obj{
		"id": run.ID, "name": run.Name, "node_id": nodeID("WorkflowRun", run.ID),
		"check_suite_id": run.ID + 1, "check_suite_node_id": nodeID("CheckSuite", run.ID+1),
		"head_branch": run.HeadBranch, "head_sha": run.HeadSHA,
		"path": ".github/workflows/" + run.Workflow, "run_number": run.RunNumber, "run_attempt": attempt,
		"referenced_workflows": []any{}, "event": run.Event, "status": status, "conclusion": concl,
		"workflow_id": wfID, "url": u, "html_url": fmt.Sprintf("%s/%s/actions/runs/%d", s.htmlBase, st.fullName(), run.ID),
		"pull_requests": prs, "created_at": ts(run.CreatedAt), "updated_at": ts(started.Add(5 * time.Minute)),
		"actor": s.userJSON(run.Actor, false), "triggering_actor": s.userJSON(run.Actor, false),
		"run_started_at": ts(started),
		"jobs_url":       u + "/jobs", "logs_url": u + "/logs", "check_suite_url": fmt.Sprintf("%s/repos/%s/check-suites/%d", s.apiBase, st.fullName(), run.ID+1),
		"artifacts_url": u + "/artifacts", "cancel_url": u + "/cancel", "rerun_url": u + "/rerun",
		"previous_attempt_url": prev,
		"workflow_url":         fmt.Sprintf("%s/repos/%s/actions/workflows/%d", s.apiBase, st.fullName(), wfID),
		"head_commit": obj{
			"id": run.HeadSHA, "tree_id": SHA("tree" + run.HeadSHA), "message": "Commit " + run.HeadSHA[:7],
			"timestamp": ts(run.CreatedAt),
			"author":    obj{"name": "Octo Cat", "email": "octocat@example.com"},
			"committer": obj{"name": "Octo Cat", "email": "octocat@example.com"},
		},
		"repository": s.minimalRepoJSON(st.fullName()), "head_repository": s.minimalRepoJSON(run.HeadRepo),
		"head_repository_id": stableIDOrRepo(s, run.HeadRepo), "display_title": "Commit " + run.HeadSHA[:7],
	}
}

func stableIDOrRepo(s *Server, fullName string) int64 {
	owner, name, _ := strings.Cut(fullName, "/")
	if st := s.repo(owner, name); st != nil {
		return st.id
	}
	return stableID(fullName)
}

func (s *Server) prMinimalJSON(st *repoState, pr *PullRequest) obj {
	headRepo := pr.HeadRepo
	if headRepo == "" {
		headRepo = st.fullName()
	}
	ref := func(r, sha, repo string) obj {
		return obj{"ref": r, "sha": sha, "repo": obj{
			"id": stableIDOrRepo(s, repo), "url": s.apiBase + "/repos/" + repo, "name": repo[strings.Index(repo, "/")+1:],
		}}
	}
	return obj{
		"id": int64(pr.Number) + st.id*1000, "number": pr.Number,
		"url":  fmt.Sprintf("%s/repos/%s/pulls/%d", s.apiBase, st.fullName(), pr.Number),
		"head": ref(pr.HeadRef, pr.HeadSHA, headRepo), "base": ref(pr.BaseRef, pr.BaseSHA, st.fullName()),
	}
}

func (s *Server) artifactJSON(st *repoState, a *artifactState) obj {
	u := fmt.Sprintf("%s/repos/%s/actions/artifacts/%d", s.apiBase, st.fullName(), a.ID)
	expires := a.CreatedAt.Add(90 * 24 * time.Hour)
	if a.Expired {
		expires = a.CreatedAt.Add(time.Hour)
		if now := s.now(); expires.After(now) {
			expires = now.Add(-time.Second)
		}
	}
	o := obj{
		"id": a.ID, "node_id": nodeID("Artifact", a.ID), "name": a.Name, "size_in_bytes": a.size(),
		"url": u, "archive_download_url": u + "/zip", "expired": a.Expired,
		"created_at": ts(a.CreatedAt), "updated_at": ts(a.CreatedAt), "expires_at": ts(expires),
		"digest": a.digest,
	}
	for _, run := range st.runs {
		if run.ID == a.RunID {
			o["workflow_run"] = obj{
				"id": run.ID, "repository_id": st.id, "head_repository_id": stableIDOrRepo(s, run.HeadRepo),
				"head_branch": run.HeadBranch, "head_sha": run.HeadSHA,
			}
		}
	}
	return o
}

func (s *Server) labelsJSON(st *repoState, names []string) []any {
	out := []any{}
	for _, n := range names {
		id := stableID("label:" + st.fullName() + ":" + n)
		out = append(out, obj{
			"id": id, "node_id": nodeID("Label", id), "url": fmt.Sprintf("%s/repos/%s/labels/%s", s.apiBase, st.fullName(), n),
			"name": n, "description": "", "color": "ededed", "default": false,
		})
	}
	return out
}

func link(href string) obj { return obj{"href": href} }

// prJSON describes a pull request; full adds the fields only the single-PR
// endpoint returns.
func (s *Server) prJSON(st *repoState, pr *PullRequest, full bool) obj {
	u := fmt.Sprintf("%s/repos/%s/pulls/%d", s.apiBase, st.fullName(), pr.Number)
	issueURL := fmt.Sprintf("%s/repos/%s/issues/%d", s.apiBase, st.fullName(), pr.Number)
	html := fmt.Sprintf("%s/%s/pull/%d", s.htmlBase, st.fullName(), pr.Number)
	headRepo := pr.HeadRepo
	if headRepo == "" {
		headRepo = st.fullName()
	}
	headOwner, _, _ := strings.Cut(headRepo, "/")
	id := int64(pr.Number) + st.id*1000
	var body any = pr.Body
	if pr.Body == "" {
		body = nil
	}
	var closedAt any
	if pr.State == "closed" {
		closedAt = ts(s.now())
	}
	statuses := fmt.Sprintf("%s/repos/%s/statuses/%s", s.apiBase, st.fullName(), pr.HeadSHA)
	o := obj{
		"url": u, "id": id, "node_id": nodeID("PullRequest", id), "html_url": html,
		"diff_url": html + ".diff", "patch_url": html + ".patch", "issue_url": issueURL,
		"commits_url": u + "/commits", "review_comments_url": u + "/comments",
		"review_comment_url": fmt.Sprintf("%s/repos/%s/pulls/comments{/number}", s.apiBase, st.fullName()),
		"comments_url":       issueURL + "/comments", "statuses_url": statuses,
		"number": pr.Number, "state": pr.State, "locked": false, "title": pr.Title,
		"user": s.userJSON(pr.User, false), "body": body, "labels": s.labelsJSON(st, pr.Labels),
		"milestone": nil, "active_lock_reason": nil,
		"created_at": ts(s.now()), "updated_at": ts(s.now()), "closed_at": closedAt, "merged_at": nil,
		"merge_commit_sha": nil, "assignee": nil, "assignees": []any{}, "requested_reviewers": []any{},
		"requested_teams": []any{}, "draft": pr.Draft,
		"head": obj{
			"label": headOwner + ":" + pr.HeadRef, "ref": pr.HeadRef, "sha": pr.HeadSHA,
			"user": s.userJSON(headOwner, false), "repo": s.repoJSON(headRepo),
		},
		"base": obj{
			"label": st.owner + ":" + pr.BaseRef, "ref": pr.BaseRef, "sha": pr.BaseSHA,
			"user": s.userJSON(st.owner, false), "repo": s.repoJSON(st.fullName()),
		},
		"_links": obj{
			"self": link(u), "html": link(html), "issue": link(issueURL), "comments": link(issueURL + "/comments"),
			"review_comments": link(u + "/comments"), "review_comment": link(fmt.Sprintf("%s/repos/%s/pulls/comments{/number}", s.apiBase, st.fullName())),
			"commits": link(u + "/commits"), "statuses": link(statuses),
		},
		"author_association": "CONTRIBUTOR", "auto_merge": nil,
	}
	if full {
		adds, dels := 0, 0
		for _, f := range pr.Files {
			adds += f.Additions
			dels += f.Deletions
		}
		for k, v := range (obj{
			"merged": false, "mergeable": nil, "rebaseable": nil, "mergeable_state": "unknown", "merged_by": nil,
			"comments": 0, "review_comments": 0, "maintainer_can_modify": false, "commits": 1,
			"additions": adds, "deletions": dels, "changed_files": len(pr.Files),
		}) {
			o[k] = v
		}
	}
	return o
}

func (s *Server) fileJSON(st *repoState, pr *PullRequest, f File) obj {
	status := f.Status
	if status == "" {
		status = "modified"
	}
	blob := gitBlobSHA([]byte(f.Filename + f.Patch))
	o := obj{
		"sha": blob, "filename": f.Filename, "status": status,
		"additions": f.Additions, "deletions": f.Deletions, "changes": f.Additions + f.Deletions,
		"blob_url":     fmt.Sprintf("%s/%s/blob/%s/%s", s.htmlBase, st.fullName(), pr.HeadSHA, f.Filename),
		"raw_url":      fmt.Sprintf("%s/%s/raw/%s/%s", s.htmlBase, st.fullName(), pr.HeadSHA, f.Filename),
		"contents_url": fmt.Sprintf("%s/repos/%s/contents/%s?ref=%s", s.apiBase, st.fullName(), f.Filename, pr.HeadSHA),
	}
	if f.Patch != "" {
		o["patch"] = f.Patch
	}
	if f.PreviousFilename != "" {
		o["previous_filename"] = f.PreviousFilename
	}
	return o
}

func (s *Server) commentJSON(st *repoState, c *Comment) obj {
	issueURL := fmt.Sprintf("%s/repos/%s/issues/%d", s.apiBase, st.fullName(), c.Issue)
	return obj{
		"id": c.ID, "node_id": nodeID("IssueComment", c.ID),
		"url":      fmt.Sprintf("%s/repos/%s/issues/comments/%d", s.apiBase, st.fullName(), c.ID),
		"html_url": fmt.Sprintf("%s/%s/issues/%d#issuecomment-%d", s.htmlBase, st.fullName(), c.Issue, c.ID),
		"body":     c.Body, "user": s.userJSON(c.User, c.Bot), "issue_url": issueURL,
		"created_at": ts(c.CreatedAt), "updated_at": ts(c.UpdatedAt), "author_association": "NONE",
	}
}

func (s *Server) issueJSON(st *repoState, is *Issue, pr *PullRequest) obj {
	u := fmt.Sprintf("%s/repos/%s/issues/%d", s.apiBase, st.fullName(), is.Number)
	html := fmt.Sprintf("%s/%s/issues/%d", s.htmlBase, st.fullName(), is.Number)
	var body any = is.Body
	if is.Body == "" {
		body = nil
	}
	var closedAt any
	if is.State == "closed" {
		closedAt = ts(is.UpdatedAt)
	}
	comments := 0
	for _, c := range st.comments {
		if c.Issue == is.Number {
			comments++
		}
	}
	id := int64(is.Number) + st.id*1000 + 500
	o := obj{
		"id": id, "node_id": nodeID("Issue", id), "url": u,
		"repository_url": s.apiBase + "/repos/" + st.fullName(),
		"labels_url":     u + "/labels{/name}", "comments_url": u + "/comments", "events_url": u + "/events",
		"html_url": html, "number": is.Number, "state": is.State, "title": is.Title, "body": body,
		"user": s.userJSON(is.User, strings.HasSuffix(is.User, "[bot]")), "labels": s.labelsJSON(st, is.Labels), "assignee": nil,
		"assignees": []any{}, "milestone": nil, "locked": false, "comments": comments,
		"closed_at": closedAt, "created_at": ts(is.CreatedAt), "updated_at": ts(is.UpdatedAt),
		"author_association": "OWNER",
	}
	if pr != nil {
		pu := fmt.Sprintf("%s/%s/pull/%d", s.htmlBase, st.fullName(), pr.Number)
		o["pull_request"] = obj{
			"url":      fmt.Sprintf("%s/repos/%s/pulls/%d", s.apiBase, st.fullName(), pr.Number),
			"html_url": pu, "diff_url": pu + ".diff", "patch_url": pu + ".patch", "merged_at": nil,
		}
	}
	return o
}

func (s *Server) checkRunJSON(st *repoState, c *CheckRun) obj {
	u := fmt.Sprintf("%s/repos/%s/check-runs/%d", s.apiBase, st.fullName(), c.ID)
	var concl any = c.Conclusion
	if c.Conclusion == "" {
		concl = nil
	}
	var completed any
	if c.Status == "completed" {
		completed = ts(s.now())
	}
	nullable := func(v string) any {
		if v == "" {
			return nil
		}
		return v
	}
	appID := int64(15368) // the GitHub Actions app
	return obj{
		"id": c.ID, "node_id": nodeID("CheckRun", c.ID), "head_sha": c.HeadSHA, "name": c.Name,
		"external_id": c.ExternalID, "url": u, "html_url": fmt.Sprintf("%s/%s/runs/%d", s.htmlBase, st.fullName(), c.ID),
		"details_url": nullable(c.DetailsURL), "status": c.Status, "conclusion": concl,
		"started_at": ts(s.now()), "completed_at": completed,
		"output": obj{
			"title": nullable(c.Title), "summary": nullable(c.Summary), "text": nullable(c.Text),
			"annotations_count": len(c.Annotations), "annotations_url": u + "/annotations",
		},
		"check_suite": obj{"id": c.ID + 1},
		"app": obj{
			"id": appID, "slug": "github-actions", "node_id": nodeID("App", appID),
			"owner": s.userJSON("github", false), "name": "GitHub Actions", "description": "Automate your workflow from idea to production",
			"external_url": "https://help.github.com/en/actions", "html_url": s.htmlBase + "/apps/github-actions",
			"created_at": ts(time.Date(2018, 7, 30, 9, 30, 17, 0, time.UTC)), "updated_at": ts(time.Date(2019, 12, 10, 19, 4, 12, 0, time.UTC)),
			"permissions": obj{"checks": "write", "contents": "write", "issues": "write", "metadata": "read"},
			"events":      []any{},
		},
		"pull_requests": []any{},
	}
}

func (s *Server) statusJSON(st *repoState, x *Status) obj {
	nullable := func(v string) any {
		if v == "" {
			return nil
		}
		return v
	}
	return obj{
		"url": fmt.Sprintf("%s/repos/%s/statuses/%s", s.apiBase, st.fullName(), x.SHA), "avatar_url": nil,
		"id": x.ID, "node_id": nodeID("StatusContext", x.ID), "state": x.State,
		"description": nullable(x.Description), "target_url": nullable(x.TargetURL), "context": x.Context,
		"created_at": ts(s.now()), "updated_at": ts(s.now()), "creator": s.userJSON("github-actions[bot]", true),
	}
}

// maxContentBytes is the largest file the contents API returns inline.
const maxContentBytes = 1 << 20 // GitHub: contents API returns base64 content "up to 1 MB"

func (s *Server) contentJSON(st *repoState, ref, p string, content []byte) obj {
	sha := gitBlobSHA(content)
	u := fmt.Sprintf("%s/repos/%s/contents/%s?ref=%s", s.apiBase, st.fullName(), p, ref)
	git := fmt.Sprintf("%s/repos/%s/git/blobs/%s", s.apiBase, st.fullName(), sha)
	html := fmt.Sprintf("%s/%s/blob/%s/%s", s.htmlBase, st.fullName(), ref, p)
	enc, text := "base64", ""
	if len(content) > maxContentBytes {
		enc = "none"
	} else {
		// GitHub wraps the base64 text at 60 characters.
		b64 := base64.StdEncoding.EncodeToString(content)
		var sb strings.Builder
		for len(b64) > 60 {
			sb.WriteString(b64[:60] + "\n")
			b64 = b64[60:]
		}
		sb.WriteString(b64 + "\n")
		text = sb.String()
	}
	name := p[strings.LastIndex(p, "/")+1:]
	return obj{
		"type": "file", "encoding": enc, "size": len(content), "name": name, "path": p, "content": text,
		"sha": sha, "url": u, "git_url": git, "html_url": html,
		"download_url": fmt.Sprintf("https://raw.githubusercontent.com/%s/%s/%s", st.fullName(), ref, p),
		"_links":       obj{"self": u, "git": git, "html": html},
	}
}
