package ghfake

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash/fnv"
	"io"
	"slices"
	"sort"
	"strings"
	"time"
)

// Run is a workflow run to serve. Zero fields get defaults when added.
type Run struct {
	ID         int64  // assigned when 0
	Workflow   string // workflow file name under .github/workflows; default "ci.yml"
	Name       string // workflow name; default "CI"
	HeadSHA    string // default derived from the id
	HeadBranch string // default "main"
	Event      string // default "push"
	Status     string // default "completed"
	Conclusion string // of the latest attempt; default "success" when completed
	// Attempts is the number of attempts; the runs list shows the latest.
	// Default 1.
	Attempts int
	// AttemptConclusions holds the conclusion of each earlier attempt
	// (index 0 = attempt 1). Missing entries default to "failure".
	AttemptConclusions []string
	CreatedAt          time.Time // default: the fake's clock when added
	RunNumber          int       // default: order of addition
	// PullRequests are the numbers of the PRs the run belongs to. GitHub
	// leaves this empty for runs of fork PRs.
	PullRequests []int
	// HeadRepo is the "owner/name" the head commit lives in; default the
	// repository itself. Another name makes the run a fork's.
	HeadRepo string
	Actor    string // default "octocat"
}

// Artifact is a workflow run artifact to serve.
type Artifact struct {
	ID    int64 // assigned when 0
	RunID int64
	Name  string
	// Files are zipped by the fake (sorted by name) unless Zip is set.
	Files map[string][]byte
	// Zip, when set, is served as is, e.g. to serve a corrupt archive.
	Zip []byte
	// Raw, when set, is an artifact uploaded unarchived (upload-artifact's
	// "archive: false"): one file, served as it is with the content type
	// of its name, which the artifact's Name should be.
	Raw []byte
	// Blob, when set, is served instead of Zip and Files, written anew for
	// every download and never held in memory: for artifacts of hundreds
	// of megabytes.
	Blob      *Blob
	Expired   bool      // answer 410 Gone to the download
	CreatedAt time.Time // default: the fake's clock when added
}

// PullRequest is a pull request to serve.
type PullRequest struct {
	Number  int // assigned when 0, from the issue number sequence
	Title   string
	Body    string
	State   string // default "open"
	User    string // default "octocat"
	HeadRef string // default "feature"
	HeadSHA string
	// HeadRepo is the head repository's "owner/name"; "" means the same
	// repository. A different name makes it a fork PR.
	HeadRepo string
	BaseRef  string // default "main"
	BaseSHA  string
	Labels   []string
	Files    []File
	Draft    bool
}

// File is a file changed by a pull request.
type File struct {
	Filename         string
	Status           string // added, removed, modified, renamed, …; default "modified"
	PreviousFilename string
	Patch            string
	Additions        int
	Deletions        int
}

// Issue is an issue to serve.
type Issue struct {
	Number    int // assigned when 0
	Title     string
	Body      string
	State     string // default "open"
	Labels    []string
	User      string // default "octocat"
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Comment is an issue or pull request comment.
type Comment struct {
	ID    int64 // assigned when 0
	Issue int
	Body  string
	// User defaults to "octocat". A comment made through the API is by
	// whom its token writes as: github-actions[bot] (Bot) for Token and the
	// like, the owner for a personal access token (UserToken, AddUserToken).
	User      string
	Bot       bool
	CreatedAt time.Time
	UpdatedAt time.Time
}

// CheckRun is a check run as the fake stores it.
type CheckRun struct {
	ID          int64
	Name        string
	HeadSHA     string
	Status      string
	Conclusion  string
	DetailsURL  string
	ExternalID  string
	Title       string
	Summary     string
	Text        string
	Annotations []Annotation
	// Writes counts the POST and PATCH requests that touched the check run.
	Writes int
}

// Annotation is a check run annotation.
type Annotation struct {
	Path       string
	StartLine  int
	EndLine    int
	Level      string
	Message    string
	Title      string
	RawDetails string
}

// Status is a commit status.
type Status struct {
	ID          int64
	SHA         string
	State       string
	TargetURL   string
	Description string
	Context     string
}

type artifactState struct {
	Artifact
	zip    []byte
	digest string
}

func (a *artifactState) size() int64 {
	if a.Blob != nil {
		return a.Blob.size
	}
	return int64(len(a.zip))
}

// Blob is artifact content that the fake writes on demand instead of holding
// it, so that a test can serve artifacts larger than it wants in memory.
type Blob struct {
	write  func(w io.Writer) error
	size   int64
	digest string
}

// NewBlob makes a Blob of what write writes. write must write the same bytes
// every time; NewBlob calls it once to learn their size and digest. One Blob
// may back many artifacts.
func NewBlob(write func(w io.Writer) error) (*Blob, error) {
	h := sha256.New()
	cw := &countWriter{w: h}
	if err := write(cw); err != nil {
		return nil, fmt.Errorf("ghfake: blob: %w", err)
	}
	return &Blob{write: write, size: cw.n, digest: "sha256:" + hex.EncodeToString(h.Sum(nil))}, nil
}

// Size is the blob's length in bytes.
func (b *Blob) Size() int64 { return b.size }

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

type repoState struct {
	owner, name   string
	id            int64
	defaultBranch string
	workflows     map[string]int64
	runs          []*Run
	artifacts     []*artifactState
	pulls         map[int]*PullRequest
	issues        map[int]*Issue
	comments      []*Comment
	checkRuns     []*CheckRun
	statuses      []*Status
	files         map[string]map[string][]byte // ref → path → content
	nextNumber    int
	// commitPullsOmitForks hides fork PRs from GET /commits/{sha}/pulls.
	commitPullsOmitForks bool
}

func (st *repoState) fullName() string { return st.owner + "/" + st.name }

// Repo is a handle on one repository of the fake. Its methods are safe for
// concurrent use.
type Repo struct {
	s     *Server
	owner string
	name  string
}

// Repo returns the repository "owner/name", creating it when needed.
func (s *Server) Repo(fullName string) *Repo {
	owner, name, ok := strings.Cut(fullName, "/")
	if !ok || owner == "" || name == "" || strings.Contains(name, "/") {
		panic(fmt.Sprintf("ghfake: repository %q is not owner/name", fullName))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	key := strings.ToLower(fullName)
	if _, ok := s.repos[key]; !ok {
		s.repos[key] = &repoState{
			owner: owner, name: name, id: stableID(fullName), defaultBranch: "main",
			workflows: map[string]int64{}, pulls: map[int]*PullRequest{}, issues: map[int]*Issue{},
			files: map[string]map[string][]byte{},
		}
	}
	return &Repo{s: s, owner: owner, name: name}
}

func (s *Server) repo(owner, name string) *repoState {
	return s.repos[strings.ToLower(owner+"/"+name)]
}

func (r *Repo) state() *repoState { return r.s.repo(r.owner, r.name) }

// stableID derives a positive id from a name, so that users and fork
// repositories get the same id every time.
func stableID(name string) int64 {
	h := fnv.New32a()
	_, _ = h.Write([]byte(strings.ToLower(name)))
	return int64(h.Sum32()%90_000_000) + 10_000_000
}

// SHA returns a deterministic 40-hex-digit commit SHA for a label, for tests
// that need many distinct commits.
func SHA(label string) string {
	h := fnv.New64a()
	_, _ = h.Write([]byte(label))
	x := h.Sum64()
	return strings.Repeat(fmt.Sprintf("%016x", x), 3)[:40]
}

// AddRun adds a workflow run and returns it with its defaults filled in.
func (r *Repo) AddRun(run Run) Run {
	s := r.s
	s.mu.Lock()
	defer s.mu.Unlock()
	st := r.state()
	if run.ID == 0 {
		run.ID = s.newID()
	}
	if run.Workflow == "" {
		run.Workflow = "ci.yml"
	}
	if run.Name == "" {
		run.Name = "CI"
	}
	if run.HeadSHA == "" {
		run.HeadSHA = SHA(fmt.Sprint("run", run.ID))
	}
	if run.HeadBranch == "" {
		run.HeadBranch = "main"
	}
	if run.Event == "" {
		run.Event = "push"
	}
	if run.Status == "" {
		run.Status = "completed"
	}
	if run.Conclusion == "" && run.Status == "completed" {
		run.Conclusion = "success"
	}
	if run.Attempts == 0 {
		run.Attempts = 1
	}
	if run.CreatedAt.IsZero() {
		run.CreatedAt = s.now()
	}
	run.CreatedAt = run.CreatedAt.UTC().Truncate(time.Second)
	if run.RunNumber == 0 {
		run.RunNumber = len(st.runs) + 1
	}
	if run.HeadRepo == "" {
		run.HeadRepo = st.fullName()
	}
	if run.Actor == "" {
		run.Actor = "octocat"
	}
	run.PullRequests = slices.Clone(run.PullRequests)
	run.AttemptConclusions = slices.Clone(run.AttemptConclusions)
	if _, ok := st.workflows[run.Workflow]; !ok {
		st.workflows[run.Workflow] = stableID(st.fullName() + "/" + run.Workflow)
	}
	st.runs = append(st.runs, &run)
	return run
}

// AddArtifact adds an artifact to a run and returns it with its id.
func (r *Repo) AddArtifact(a Artifact) Artifact {
	s := r.s
	zipped := a.Zip
	if a.Raw != nil {
		zipped = a.Raw
	}
	if zipped == nil && a.Blob == nil {
		var err error
		if zipped, err = ZipFiles(a.Files); err != nil {
			panic(fmt.Sprintf("ghfake: zipping artifact %q: %v", a.Name, err))
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if a.ID == 0 {
		a.ID = s.newID()
	}
	if a.CreatedAt.IsZero() {
		a.CreatedAt = s.now()
	}
	a.CreatedAt = a.CreatedAt.UTC().Truncate(time.Second)
	st := &artifactState{Artifact: a, zip: zipped}
	if a.Blob != nil {
		st.zip, st.digest = nil, a.Blob.digest
	} else {
		st.digest = sha256Digest(zipped)
	}
	r.state().artifacts = append(r.state().artifacts, st)
	return a
}

// ExpireArtifact makes an artifact's download answer 410 from now on.
func (r *Repo) ExpireArtifact(id int64) {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	for _, a := range r.state().artifacts {
		if a.ID == id {
			a.Expired = true
		}
	}
}

// AddPullRequest adds a pull request and returns it with its number.
func (r *Repo) AddPullRequest(pr PullRequest) PullRequest {
	s := r.s
	s.mu.Lock()
	defer s.mu.Unlock()
	st := r.state()
	if pr.Number == 0 {
		st.nextNumber++
		pr.Number = st.nextNumber
	}
	st.nextNumber = max(st.nextNumber, pr.Number)
	if pr.State == "" {
		pr.State = "open"
	}
	if pr.User == "" {
		pr.User = "octocat"
	}
	if pr.HeadRef == "" {
		pr.HeadRef = "feature"
	}
	if pr.HeadSHA == "" {
		pr.HeadSHA = SHA(fmt.Sprint("pr-head", pr.Number))
	}
	if pr.BaseRef == "" {
		pr.BaseRef = st.defaultBranch
	}
	if pr.BaseSHA == "" {
		pr.BaseSHA = SHA(fmt.Sprint("pr-base", pr.Number))
	}
	if pr.Title == "" {
		pr.Title = fmt.Sprintf("Pull request %d", pr.Number)
	}
	pr.Files = slices.Clone(pr.Files)
	pr.Labels = slices.Clone(pr.Labels)
	st.pulls[pr.Number] = &pr
	return pr
}

// AddIssue adds an issue and returns it with its number.
func (r *Repo) AddIssue(is Issue) Issue {
	s := r.s
	s.mu.Lock()
	defer s.mu.Unlock()
	return r.state().addIssue(s, is)
}

func (st *repoState) addIssue(s *Server, is Issue) Issue {
	if is.Number == 0 {
		st.nextNumber++
		is.Number = st.nextNumber
	}
	st.nextNumber = max(st.nextNumber, is.Number)
	if is.State == "" {
		is.State = "open"
	}
	if is.User == "" {
		is.User = "octocat"
	}
	if is.CreatedAt.IsZero() {
		is.CreatedAt = s.now()
	}
	if is.UpdatedAt.IsZero() {
		is.UpdatedAt = is.CreatedAt
	}
	is.Labels = slices.Clone(is.Labels)
	st.issues[is.Number] = &is
	return is
}

// AddComment adds a comment to an issue or pull request.
func (r *Repo) AddComment(c Comment) Comment {
	s := r.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if c.ID == 0 {
		c.ID = s.newID()
	}
	if c.User == "" {
		c.User = "octocat"
	}
	if c.CreatedAt.IsZero() {
		c.CreatedAt = s.now()
	}
	if c.UpdatedAt.IsZero() {
		c.UpdatedAt = c.CreatedAt
	}
	r.state().comments = append(r.state().comments, &c)
	return c
}

// SetFile stores a file's content at a ref (branch name or commit SHA; ""
// means the default branch).
func (r *Repo) SetFile(ref, path string, content []byte) {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	st := r.state()
	if ref == "" {
		ref = st.defaultBranch
	}
	if st.files[ref] == nil {
		st.files[ref] = map[string][]byte{}
	}
	st.files[ref][strings.TrimPrefix(path, "/")] = bytes.Clone(content)
}

// Comments returns the comments of an issue or pull request, oldest first.
func (r *Repo) Comments(issue int) []Comment {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	var out []Comment
	for _, c := range r.state().comments {
		if c.Issue == issue {
			out = append(out, *c)
		}
	}
	return out
}

// Issues returns the repository's issues, by number.
func (r *Repo) Issues() []Issue {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	var out []Issue
	for _, is := range r.state().issues {
		c := *is
		c.Labels = slices.Clone(is.Labels)
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Number < out[j].Number })
	return out
}

// CheckRuns returns the check runs created through the API.
func (r *Repo) CheckRuns() []CheckRun {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	var out []CheckRun
	for _, c := range r.state().checkRuns {
		cp := *c
		cp.Annotations = slices.Clone(c.Annotations)
		out = append(out, cp)
	}
	return out
}

// Statuses returns the commit statuses created through the API.
func (r *Repo) Statuses() []Status {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	var out []Status
	for _, st := range r.state().statuses {
		out = append(out, *st)
	}
	return out
}

// ZipFiles zips files in name order with a fixed timestamp, the way an
// artifact download delivers them.
func ZipFiles(files map[string][]byte) ([]byte, error) {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, n := range names {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: n, Method: zip.Deflate, Modified: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)})
		if err != nil {
			return nil, err
		}
		if _, err := w.Write(files[n]); err != nil {
			return nil, err
		}
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
