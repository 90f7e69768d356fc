package ghapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/flakegate/flakegate/pkg/internal/retry"
)

// signedURLReuse is how long a signed download URL is used again after a
// broken download; an older one is asked for anew. GitHub: the URL
// "expires after 1 minute".
const signedURLReuse = 30 * time.Second

// Spool is where DownloadArtifactTo writes a zip. An *os.File is one. A
// download that starts over empties it first (Truncate and Seek to 0).
type Spool interface {
	io.Writer
	io.Seeker
	Truncate(size int64) error
}

// DownloadArtifact returns an artifact's zip, read into memory. Use
// DownloadArtifactTo for artifacts that may be large.
func (c *Client) DownloadArtifact(ctx context.Context, repo Repo, artifactID int64, maxBytes int64) ([]byte, error) {
	var buf memSpool
	if _, err := c.DownloadArtifactTo(ctx, repo, artifactID, maxBytes, &buf); err != nil {
		return nil, err
	}
	return buf.b, nil
}

// DownloadArtifactTo writes an artifact's zip to dst, streaming, and returns
// its size.
//
// It asks the API for the download (GET …/actions/artifacts/{id}/zip, which
// answers 302 with a signed URL valid for about a minute), then fetches that
// URL with the blob client and no Authorization header: the token never
// reaches the blob host. A 410 is ErrExpired. A body over maxBytes is
// ErrTooLarge (maxBytes <= 0: 512 MiB). When the blob host refuses the
// signature (403, the URL expired), the redirect is requested once more.
// When the connection breaks mid-body (a reset, an unexpected EOF, a
// timeout), the download starts over, with backoff, up to MaxRetries times
// and MaxWait in all; from a fresh URL if the old one may have expired.
func (c *Client) DownloadArtifactTo(ctx context.Context, repo Repo, artifactID int64, maxBytes int64, dst Spool) (int64, error) {
	what := fmt.Sprintf("artifact %d of %s", artifactID, repo)
	if maxBytes <= 0 {
		maxBytes = defaultMaxArtifactBytes
	}
	var (
		u        *url.URL
		signed   time.Time
		refused  bool // the blob host refused a signature once
		waited   time.Duration
		attempts int // broken downloads so far
	)
	for {
		if u == nil || c.now().Sub(signed) >= signedURLReuse {
			var err error
			if u, err = c.signedURL(ctx, repo, artifactID, what); err != nil {
				return 0, err
			}
			signed = c.now()
		}
		if err := rewind(dst); err != nil {
			return 0, fmt.Errorf("%s: %w", what, err)
		}
		n, status, err := c.fetchBlob(ctx, u, maxBytes, what, dst)
		var broken *brokenError
		switch {
		case err == nil:
			return n, nil
		case status == http.StatusForbidden && !refused:
			refused, u = true, nil // the signed URL expired before we used it
			continue
		case errors.As(err, &broken) && ctx.Err() == nil && retry.Transient(broken.err) && attempts < c.opts.Retry.MaxRetries:
			wait := c.opts.backoff(attempts)
			if waited+wait > c.opts.Retry.MaxWait {
				return 0, err
			}
			attempts++
			c.stats.retries.Add(1)
			if err := c.opts.Retry.Sleep(ctx, wait); err != nil {
				return 0, err
			}
			waited += wait
			continue
		}
		return 0, err
	}
}

// signedURL asks the API where to download an artifact.
func (c *Client) signedURL(ctx context.Context, repo Repo, artifactID int64, what string) (*url.URL, error) {
	u, resp, err := c.gh.Actions.DownloadArtifact(ctx, repo.Owner, repo.Name, artifactID, 0)
	if err != nil {
		return nil, c.classify(what, resp, err)
	}
	if u.Scheme != "https" && u.Scheme != "http" {
		return nil, fmt.Errorf("%s: redirect to a %q URL", what, u.Scheme)
	}
	return u, nil
}

func rewind(dst Spool) error {
	if err := dst.Truncate(0); err != nil {
		return err
	}
	_, err := dst.Seek(0, io.SeekStart)
	return err
}

// brokenError is a download whose body broke off.
type brokenError struct {
	what string
	err  error
}

func (e *brokenError) Error() string { return e.what + ": download: " + e.err.Error() }
func (e *brokenError) Unwrap() error { return e.err }

// fetchBlob GETs a signed URL without credentials into dst.
func (c *Client) fetchBlob(ctx context.Context, u *url.URL, maxBytes int64, what string, dst io.Writer) (int64, int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return 0, 0, fmt.Errorf("%s: %w", what, retry.Redact(err))
	}
	req.Header.Set("User-Agent", c.opts.UserAgent)
	resp, err := c.blob.Do(req)
	if err != nil {
		return 0, 0, fmt.Errorf("%s: download: %w", what, retry.Redact(err))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorBody))
		return 0, resp.StatusCode, &APIError{What: what + ": blob download", StatusCode: resp.StatusCode}
	}
	if resp.ContentLength > maxBytes {
		return 0, resp.StatusCode, &SizeError{What: what, Limit: maxBytes, Size: resp.ContentLength}
	}
	body := &readErrs{r: io.LimitReader(resp.Body, maxBytes+1)}
	n, err := io.Copy(dst, body)
	switch {
	case body.err != nil:
		return n, resp.StatusCode, &brokenError{what: what, err: retry.Redact(body.err)}
	case err != nil:
		return n, resp.StatusCode, fmt.Errorf("%s: writing the download: %w", what, err)
	case n > maxBytes:
		return n, resp.StatusCode, &SizeError{What: what, Limit: maxBytes, Size: -1}
	}
	return n, resp.StatusCode, nil
}

// readErrs remembers a read error, to tell it from a write error after
// io.Copy.
type readErrs struct {
	r   io.Reader
	err error
}

func (r *readErrs) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if err != nil && err != io.EOF {
		r.err = err
	}
	return n, err
}

// memSpool is a Spool in memory.
type memSpool struct {
	b   []byte
	off int
}

func (m *memSpool) Write(p []byte) (int, error) {
	if end := m.off + len(p); end > len(m.b) {
		m.b = append(m.b, make([]byte, end-len(m.b))...)
	}
	copy(m.b[m.off:], p)
	m.off += len(p)
	return len(p), nil
}

func (m *memSpool) Seek(offset int64, whence int) (int64, error) {
	switch whence {
	case io.SeekCurrent:
		offset += int64(m.off)
	case io.SeekEnd:
		offset += int64(len(m.b))
	}
	if offset < 0 {
		return 0, errors.New("seek before the start")
	}
	m.off = int(offset)
	return offset, nil
}

func (m *memSpool) Truncate(size int64) error {
	if size < 0 || size > int64(len(m.b)) {
		return errors.New("truncate out of range")
	}
	m.b = m.b[:size]
	return nil
}
