package ghapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
)

// DownloadArtifact returns an artifact's zip, read into memory.
//
// It asks the API for the download (GET …/actions/artifacts/{id}/zip, which
// answers 302 with a signed URL valid for about a minute), then fetches that
// URL with the blob client and no Authorization header: the token never
// reaches the blob host. A 410 is ErrExpired. A body over maxBytes is
// ErrTooLarge (maxBytes <= 0: 512 MiB). When the blob host refuses the
// signature (403, the URL expired), the redirect is requested once more.
func (c *Client) DownloadArtifact(ctx context.Context, repo Repo, artifactID int64, maxBytes int64) ([]byte, error) {
	what := fmt.Sprintf("artifact %d of %s", artifactID, repo)
	if maxBytes <= 0 {
		maxBytes = defaultMaxArtifactBytes
	}
	for try := 0; ; try++ {
		u, resp, err := c.gh.Actions.DownloadArtifact(ctx, repo.Owner, repo.Name, artifactID, 0)
		if err != nil {
			return nil, c.classify(what, resp, err)
		}
		if u.Scheme != "https" && u.Scheme != "http" {
			return nil, fmt.Errorf("%s: redirect to a %q URL", what, u.Scheme)
		}
		body, status, err := c.fetchBlob(ctx, u, maxBytes, what)
		if status == http.StatusForbidden && try == 0 {
			continue // the signed URL expired before we used it
		}
		return body, err
	}
}

// fetchBlob GETs a signed URL without credentials.
func (c *Client) fetchBlob(ctx context.Context, u *url.URL, maxBytes int64, what string) ([]byte, int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %w", what, redact(err))
	}
	req.Header.Set("User-Agent", c.opts.UserAgent)
	resp, err := c.blob.Do(req)
	if err != nil {
		return nil, 0, fmt.Errorf("%s: download: %w", what, redact(err))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorBody))
		return nil, resp.StatusCode, &APIError{What: what + ": blob download", StatusCode: resp.StatusCode}
	}
	if resp.ContentLength > maxBytes {
		return nil, resp.StatusCode, &SizeError{What: what, Limit: maxBytes, Size: resp.ContentLength}
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBytes+1))
	if err != nil {
		return nil, resp.StatusCode, fmt.Errorf("%s: download: %w", what, redact(err))
	}
	if int64(len(body)) > maxBytes {
		return nil, resp.StatusCode, &SizeError{What: what, Limit: maxBytes, Size: -1}
	}
	return body, resp.StatusCode, nil
}

// redact drops the query, which holds the signature, from the URL of a
// *url.Error, so that logs never show a usable download link.
func redact(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		if u, perr := url.Parse(ue.URL); perr == nil {
			u.RawQuery = ""
			ue.URL = u.String()
		}
	}
	return err
}
