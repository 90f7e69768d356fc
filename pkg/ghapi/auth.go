package ghapi

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// errOtherHost says an API call was redirected away from the API host.
var errOtherHost = errors.New("redirect to another host refused")

// maxRedirects is what net/http allows when no CheckRedirect is given.
const maxRedirects = 10

// authTransport adds the token to requests for the API host, and to no
// other: go-github's own WithAuthToken adds it to every request, redirects
// to other hosts included.
type authTransport struct {
	base  http.RoundTripper
	token string
	api   *url.URL
}

func (t *authTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ours := sameOrigin(req.URL, t.api)
	switch {
	case ours && t.token != "":
		req = req.Clone(req.Context()) // a RoundTripper must not change its request
		req.Header.Set("Authorization", "Bearer "+t.token)
	case !ours && req.Header.Get("Authorization") != "":
		req = req.Clone(req.Context())
		req.Header.Del("Authorization")
	}
	return t.base.RoundTrip(req)
}

// checkRedirect refuses redirects of API calls to another host: GitHub
// redirects within the API (renamed and transferred repositories), and an
// answer from elsewhere is not GitHub's. Downloads, which GitHub does send
// elsewhere, take the redirect by hand (DownloadArtifact). next is the
// caller's own policy, if any.
func checkRedirect(api *url.URL, next func(*http.Request, []*http.Request) error) func(*http.Request, []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		if !sameOrigin(req.URL, api) {
			return fmt.Errorf("%w: %s is not the API host %s", errOtherHost, origin(req.URL), origin(api))
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= maxRedirects {
			return fmt.Errorf("stopped after %d redirects", maxRedirects)
		}
		return nil
	}
}

// sameOrigin reports whether u has a's scheme, host and port (the scheme's
// default port when none is given).
func sameOrigin(u, a *url.URL) bool {
	return strings.EqualFold(u.Scheme, a.Scheme) && strings.EqualFold(hostPort(u), hostPort(a))
}

func hostPort(u *url.URL) string {
	if u.Port() != "" {
		return u.Host
	}
	switch strings.ToLower(u.Scheme) {
	case "https":
		return u.Host + ":443"
	case "http":
		return u.Host + ":80"
	}
	return u.Host
}

// origin is scheme://host of u, without the path and query that may carry
// a signature.
func origin(u *url.URL) string { return u.Scheme + "://" + u.Host }
