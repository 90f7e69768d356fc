package ghfake

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

const twirpPrefix = "/twirp/github.actions.results.api.v1.ArtifactService/"

// runtimeIDs are the backend ids a runtime token is scoped to, and the run
// that finalized artifacts are attached to (if any).
type runtimeIDs struct {
	run, job string
	repo     string
	runID    int64
}

// RuntimeToken issues an ACTIONS_RUNTIME_TOKEN for fresh backend ids.
func (s *Server) RuntimeToken() string { return s.RuntimeTokenFor("", 0) }

// RuntimeTokenFor issues an ACTIONS_RUNTIME_TOKEN whose finalized uploads
// also appear as artifacts of workflow run runID of repository repo
// ("owner/name") in the REST API.
func (s *Server) RuntimeTokenFor(repo string, runID int64) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.newID()
	ids := runtimeIDs{
		run:  fmt.Sprintf("%08x-0000-4000-8000-%012x", n, n),
		job:  fmt.Sprintf("%08x-0000-4000-9000-%012x", n, n),
		repo: repo, runID: runID,
	}
	tok := MakeRuntimeToken(ids.run, ids.job, s.now())
	s.runtimeTokens[tok] = ids
	return tok
}

// BackendIDs returns the backend ids a runtime token issued by the fake is
// scoped to.
func (s *Server) BackendIDs(token string) (runID, jobID string, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ids, ok := s.runtimeTokens[token]
	return ids.run, ids.job, ok
}

// MakeRuntimeToken builds an unsigned JWT shaped like the runner's
// ACTIONS_RUNTIME_TOKEN: its scp claim is
// "Actions.ExecuteOrchestrationPlan Actions.Results:<run>:<job>".
func MakeRuntimeToken(runBackendID, jobBackendID string, now time.Time) string {
	enc := func(v any) string {
		b, _ := json.Marshal(v)
		return base64.RawURLEncoding.EncodeToString(b)
	}
	header := enc(map[string]any{"typ": "JWT", "alg": "RS256", "x5t": "ghfake"})
	payload := enc(map[string]any{
		"nameid":            "dddddddd-dddd-dddd-dddd-dddddddddddd",
		"scp":               "Actions.ExecuteOrchestrationPlan Actions.Results:" + runBackendID + ":" + jobBackendID,
		"IdentityTypeClaim": "System:ServiceIdentity",
		"iss":               "vstoken.actions.githubusercontent.com",
		"aud":               "vstoken.actions.githubusercontent.com",
		"nbf":               now.Unix(),
		"exp":               now.Add(6 * time.Hour).Unix(),
	})
	return header + "." + payload + "." + base64.RawURLEncoding.EncodeToString([]byte("ghfake-unsigned"))
}

// SetTwirpCamelCase makes the results service answer with camelCase field
// names (protobuf's JSON default) instead of snake_case.
func (s *Server) SetTwirpCamelCase(camel bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.twirpCamelCase = camel
}

func (s *Server) serveResults(w http.ResponseWriter, r *http.Request) {
	s.serve(HostResults, w, r, s.handleTwirp)
}

var twirpStatus = map[string]int{
	"invalid_argument": 400, "malformed": 400, "unauthenticated": 401, "permission_denied": 403,
	"not_found": 404, "bad_route": 404, "already_exists": 409, "failed_precondition": 412,
	"internal": 500, "unavailable": 503,
}

func twirpError(w http.ResponseWriter, code, msg string) {
	writeJSON(w, twirpStatus[code], map[string]string{"code": code, "msg": msg})
}

// twirpFields are the snake_case request fields of each method and whether
// each is an int64 (sent as a JSON string).
var twirpFields = map[string]map[string]string{
	"CreateArtifact": {
		"workflow_run_backend_id": "string", "workflow_job_run_backend_id": "string", "name": "string",
		"expires_at": "timestamp", "version": "int32", "mime_type": "string",
	},
	"FinalizeArtifact": {
		"workflow_run_backend_id": "string", "workflow_job_run_backend_id": "string", "name": "string",
		"size": "int64", "hash": "string",
	},
}

func (s *Server) handleTwirp(w http.ResponseWriter, r *http.Request, body []byte) {
	method, ok := strings.CutPrefix(r.URL.Path, twirpPrefix)
	fields, known := twirpFields[method]
	if !ok || !known || r.Method != http.MethodPost {
		s.violate(HostResults, r, 404, "no such twirp route")
		twirpError(w, "bad_route", "no handler for path "+r.URL.Path)
		return
	}
	if !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		s.violate(HostResults, r, 404, "twirp request content type must be application/json")
		twirpError(w, "bad_route", "unexpected Content-Type: "+r.Header.Get("Content-Type"))
		return
	}
	s.mu.Lock()
	ids, authed := s.runtimeTokens[bearer(r.Header.Get("Authorization"))]
	s.mu.Unlock()
	if !authed {
		twirpError(w, "unauthenticated", "invalid runtime token")
		return
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(body, &raw); err != nil {
		s.violate(HostResults, r, 400, "request body is not a JSON object")
		twirpError(w, "malformed", "the json request could not be decoded")
		return
	}
	in := map[string]string{}
	keys := make([]string, 0, len(raw))
	for k := range raw {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		v := raw[k]
		typ, ok := fields[k]
		if !ok {
			s.violate(HostResults, r, 400, fmt.Sprintf("unknown field %q (fields are snake_case)", k))
			twirpError(w, "malformed", "unknown field "+k)
			return
		}
		if problem := checkTwirpValue(typ, v); problem != "" {
			s.violate(HostResults, r, 400, fmt.Sprintf("field %q: %s", k, problem))
			twirpError(w, "malformed", fmt.Sprintf("field %s: %s", k, problem))
			return
		}
		var sv string
		if json.Unmarshal(v, &sv) != nil {
			sv = string(v)
		}
		in[k] = sv
	}
	if in["workflow_run_backend_id"] != ids.run || in["workflow_job_run_backend_id"] != ids.job {
		twirpError(w, "permission_denied", "backend ids do not match the runtime token")
		return
	}
	if method == "CreateArtifact" {
		s.createArtifact(w, r, ids, in)
	} else {
		s.finalizeArtifact(w, r, ids, in)
	}
}

// checkTwirpValue checks a field's JSON encoding as protobuf's JSON mapping
// requires it.
func checkTwirpValue(typ string, v json.RawMessage) string {
	var str string
	isString := json.Unmarshal(v, &str) == nil
	switch typ {
	case "string":
		if !isString {
			return "want a JSON string"
		}
	case "int64":
		if !isString {
			return "int64 values must be JSON strings"
		}
		if _, err := strconv.ParseInt(str, 10, 64); err != nil {
			return "not an integer"
		}
	case "int32":
		var n int32
		if json.Unmarshal(v, &n) != nil {
			return "want a JSON number"
		}
	case "timestamp":
		if !isString {
			return "want an RFC 3339 string"
		}
		if _, err := time.Parse(time.RFC3339Nano, str); err != nil {
			return "not an RFC 3339 timestamp"
		}
	}
	return ""
}

// artifactNameRefused lists what artifact names may not contain.
const artifactNameRefused = "\":<>|*?\\/\r\n"

func (s *Server) twirpReply(w http.ResponseWriter, snake map[string]any) {
	s.mu.Lock()
	camel := s.twirpCamelCase
	s.mu.Unlock()
	if camel {
		out := map[string]any{}
		for k, v := range snake {
			parts := strings.Split(k, "_")
			for i := 1; i < len(parts); i++ {
				parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
			}
			out[strings.Join(parts, "")] = v
		}
		snake = out
	}
	writeJSON(w, http.StatusOK, snake)
}

func (s *Server) createArtifact(w http.ResponseWriter, r *http.Request, ids runtimeIDs, in map[string]string) {
	name := in["name"]
	if name == "" || strings.ContainsAny(name, artifactNameRefused) {
		twirpError(w, "invalid_argument", fmt.Sprintf("artifact name %q is not valid", name))
		return
	}
	if in["version"] != "4" {
		twirpError(w, "invalid_argument", "version must be 4")
		return
	}
	var expires time.Time
	if v := in["expires_at"]; v != "" {
		expires, _ = time.Parse(time.RFC3339Nano, v)
	}
	s.mu.Lock()
	for _, u := range s.uploads {
		if u.RunBackendID == ids.run && u.Name == name {
			s.mu.Unlock()
			twirpError(w, "already_exists", "an artifact with this name already exists on the workflow run")
			return
		}
	}
	n := len(s.uploads) + 1
	up := &uploadState{
		Upload:   Upload{RunBackendID: ids.run, JobBackendID: ids.job, Name: name, Version: 4, ExpiresAt: expires},
		blobPath: fmt.Sprintf("/uploads/%s/%d", ids.run, n),
		repo:     ids.repo, runID: ids.runID,
	}
	s.uploads = append(s.uploads, up)
	signed := s.signBlobURL(up.blobPath, "cw")
	s.mu.Unlock()
	s.twirpReply(w, map[string]any{"ok": true, "signed_upload_url": signed})
}

func (s *Server) finalizeArtifact(w http.ResponseWriter, r *http.Request, ids runtimeIDs, in map[string]string) {
	s.mu.Lock()
	var up *uploadState
	for _, u := range s.uploads {
		if u.RunBackendID == ids.run && u.Name == in["name"] {
			up = u
		}
	}
	var problem, code string
	sum := sha256.Sum256(nil)
	switch {
	case up == nil:
		code, problem = "not_found", "no artifact "+in["name"]+" was created"
	case up.Finalized:
		code, problem = "failed_precondition", "artifact already finalized"
	case !up.Uploaded:
		code, problem = "failed_precondition", "nothing was uploaded"
	default:
		sum = sha256.Sum256(up.Zip)
		if size, _ := strconv.ParseInt(in["size"], 10, 64); size != int64(len(up.Zip)) {
			code, problem = "invalid_argument", fmt.Sprintf("size %s does not match the %d bytes uploaded", in["size"], len(up.Zip))
		} else if h := in["hash"]; h != "" && h != "sha256:"+hex.EncodeToString(sum[:]) {
			code, problem = "invalid_argument", "hash does not match the uploaded content"
		}
	}
	if problem != "" {
		s.mu.Unlock()
		twirpError(w, code, problem)
		return
	}
	up.Finalized = true
	up.Size = int64(len(up.Zip))
	up.Hash = in["hash"]
	up.ID = s.newID()
	if up.repo != "" {
		if owner, name, ok := strings.Cut(up.repo, "/"); ok {
			if st := s.repo(owner, name); st != nil {
				st.artifacts = append(st.artifacts, &artifactState{
					Artifact: Artifact{ID: up.ID, RunID: up.runID, Name: up.Name, CreatedAt: s.now().UTC().Truncate(time.Second)},
					zip:      slices.Clone(up.Zip), digest: sha256Digest(up.Zip),
				})
			}
		}
	}
	id := up.ID
	s.mu.Unlock()
	s.twirpReply(w, map[string]any{"ok": true, "artifact_id": strconv.FormatInt(id, 10)})
}
