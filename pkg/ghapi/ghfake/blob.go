package ghfake

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Upload is an artifact uploaded through the v4 protocol.
type Upload struct {
	// ID is the artifact id FinalizeArtifact returned; 0 before that.
	ID           int64
	RunBackendID string
	JobBackendID string
	Name         string
	Version      int
	ExpiresAt    time.Time // zero when the client sent none
	// Zip is what was uploaded to the blob host.
	Zip       []byte
	Uploaded  bool
	Finalized bool
	// Size and Hash are what FinalizeArtifact declared; the fake refuses a
	// finalize whose size or hash differ from the upload.
	Size int64
	Hash string
}

// Files opens the uploaded zip and returns its files by name.
func (u Upload) Files() (map[string][]byte, error) {
	zr, err := zip.NewReader(bytes.NewReader(u.Zip), int64(len(u.Zip)))
	if err != nil {
		return nil, fmt.Errorf("upload %q: %w", u.Name, err)
	}
	out := map[string][]byte{}
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			return nil, fmt.Errorf("upload %q: %s: %w", u.Name, f.Name, err)
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			return nil, fmt.Errorf("upload %q: %s: %w", u.Name, f.Name, err)
		}
		out[f.Name] = b
	}
	return out, nil
}

type uploadState struct {
	Upload
	blobPath string
	blocks   map[string][]byte
	repo     string
	runID    int64
}

// Uploads returns the artifacts uploaded through the results service, in
// creation order.
func (s *Server) Uploads() []Upload {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Upload
	for _, u := range s.uploads {
		c := u.Upload
		c.Zip = bytes.Clone(u.Zip)
		out = append(out, c)
	}
	return out
}

func (s *Server) signature(p, perm string, exp int64) string {
	sum := sha256.Sum256([]byte(fmt.Sprintf("%s|%s|%s|%d", s.secret, p, perm, exp)))
	return hex.EncodeToString(sum[:16])
}

func (s *Server) serveBlob(w http.ResponseWriter, r *http.Request) {
	s.serve(HostBlob, w, r, s.handleBlob)
}

func azureError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/xml")
	w.Header().Set("x-ms-error-code", code)
	w.WriteHeader(status)
	fmt.Fprintf(w, `<?xml version="1.0" encoding="utf-8"?><Error><Code>%s</Code><Message>%s</Message></Error>`, code, msg)
}

// checkSignature verifies the SAS-like query the fake signs; false when it
// answered 403.
func (s *Server) checkSignature(w http.ResponseWriter, r *http.Request, perm string) bool {
	q := r.URL.Query()
	exp, err := strconv.ParseInt(q.Get("se"), 10, 64)
	s.mu.Lock()
	now := s.now()
	want := s.signature(r.URL.Path, q.Get("sp"), exp)
	s.mu.Unlock()
	switch {
	case err != nil || q.Get("sig") != want || !strings.Contains(q.Get("sp"), perm):
		azureError(w, http.StatusForbidden, "AuthenticationFailed", "Server failed to authenticate the request. Make sure the value of Authorization header is formed correctly including the signature.")
		return false
	case now.Unix() > exp:
		azureError(w, http.StatusForbidden, "AuthenticationFailed", "Server failed to authenticate the request. Signed expiry time has passed.")
		return false
	}
	return true
}

func (s *Server) handleBlob(w http.ResponseWriter, r *http.Request, body []byte) {
	switch {
	case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/artifacts/"):
		s.blobDownload(w, r)
	case r.Method == http.MethodPut && strings.HasPrefix(r.URL.Path, "/uploads/"):
		s.blobUpload(w, r, body)
	default:
		s.violate(HostBlob, r, http.StatusBadRequest, "unexpected blob request")
		azureError(w, http.StatusBadRequest, "UnsupportedHttpVerb", "The resource doesn't support the specified HTTP verb.")
	}
}

func (s *Server) blobDownload(w http.ResponseWriter, r *http.Request) {
	if !s.checkSignature(w, r, "r") {
		return
	}
	// /artifacts/{owner}/{repo}/{id}.zip, or {id} for an unarchived one
	parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/artifacts/"), "/")
	if len(parts) != 3 {
		azureError(w, http.StatusNotFound, "BlobNotFound", "The specified blob does not exist.")
		return
	}
	id, _ := strconv.ParseInt(strings.TrimSuffix(parts[2], ".zip"), 10, 64)
	s.mu.Lock()
	var (
		zipped []byte
		blob   *Blob
		raw    string // an unarchived artifact's file name
	)
	if st := s.repo(parts[0], parts[1]); st != nil {
		if a := st.artifact(id); a != nil && !a.Expired {
			zipped, blob = a.zip, a.Blob
			if a.Raw != nil {
				raw = a.Name
			}
		}
	}
	s.mu.Unlock()
	if zipped == nil && blob == nil {
		azureError(w, http.StatusNotFound, "BlobNotFound", "The specified blob does not exist.")
		return
	}
	if raw != "" {
		// As the artifact toolkit uploads one file: the content type of
		// its extension, and its name in Content-Disposition.
		ct := "application/octet-stream"
		if strings.EqualFold(path.Ext(raw), ".xml") {
			ct = "text/xml"
		}
		w.Header().Set("Content-Type", ct)
		w.Header().Set("Content-Disposition", "attachment; filename*=UTF-8''"+url.PathEscape(raw))
	} else {
		w.Header().Set("Content-Type", "application/zip")
	}
	w.Header().Set("x-ms-blob-type", "BlockBlob")
	w.WriteHeader(http.StatusOK)
	if blob != nil {
		if rec, ok := w.(*recorder); ok {
			rec.stream = blob // written when the response is sent
		} else {
			_ = blob.write(w)
		}
		return
	}
	_, _ = w.Write(zipped)
}

type blockList struct {
	Latest      []string `xml:"Latest"`
	Committed   []string `xml:"Committed"`
	Uncommitted []string `xml:"Uncommitted"`
}

func (s *Server) blobUpload(w http.ResponseWriter, r *http.Request, body []byte) {
	if bearer(r.Header.Get("Authorization")) != "" || r.Header.Get("Authorization") != "" {
		s.violate(HostBlob, r, 0, "a credential was sent to the blob host")
	}
	if !s.checkSignature(w, r, "w") {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var up *uploadState
	for _, u := range s.uploads {
		if u.blobPath == r.URL.Path {
			up = u
		}
	}
	if up == nil {
		azureError(w, http.StatusNotFound, "ContainerNotFound", "The specified container does not exist.")
		return
	}
	if up.Finalized {
		azureError(w, http.StatusConflict, "BlobImmutableDueToPolicy", "This operation is not permitted as the blob is immutable.")
		return
	}
	q := r.URL.Query()
	switch q.Get("comp") {
	case "":
		if r.Header.Get("x-ms-blob-type") != "BlockBlob" {
			s.violations = append(s.violations, Violation{Host: HostBlob, Method: r.Method, Path: r.URL.Path, Status: 400, Problem: "PUT without x-ms-blob-type: BlockBlob"})
			azureError(w, http.StatusBadRequest, "MissingRequiredHeader", "An HTTP header that's mandatory for this request is not specified.")
			return
		}
		up.Zip, up.Uploaded = bytes.Clone(body), true
	case "block":
		id := q.Get("blockid")
		if _, err := base64.StdEncoding.DecodeString(id); err != nil || id == "" {
			azureError(w, http.StatusBadRequest, "InvalidQueryParameterValue", "blockid must be base64.")
			return
		}
		if up.blocks == nil {
			up.blocks = map[string][]byte{}
		}
		up.blocks[id] = bytes.Clone(body)
	case "blocklist":
		var bl blockList
		if err := xml.Unmarshal(body, &bl); err != nil {
			azureError(w, http.StatusBadRequest, "InvalidXmlDocument", "XML specified is not syntactically valid.")
			return
		}
		var out []byte
		for _, id := range slices.Concat(bl.Latest, bl.Uncommitted, bl.Committed) {
			b, ok := up.blocks[id]
			if !ok {
				azureError(w, http.StatusBadRequest, "InvalidBlockList", "The specified block list is invalid.")
				return
			}
			out = append(out, b...)
		}
		up.Zip, up.Uploaded = out, true
	default:
		azureError(w, http.StatusBadRequest, "InvalidQueryParameterValue", "Value for one of the query parameters specified in the request URI is invalid.")
		return
	}
	sum := sha256.Sum256(up.Zip)
	w.Header().Set("ETag", `"0x`+strings.ToUpper(hex.EncodeToString(sum[:8]))+`"`)
	w.WriteHeader(http.StatusCreated)
}
