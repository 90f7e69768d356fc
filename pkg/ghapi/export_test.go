package ghapi

import "github.com/google/go-github/v60/github"

// GoGitHub is the client's go-github client, for tests that send requests
// the package does not wrap through the same transport.
func GoGitHub(c *Client) *github.Client { return c.gh }
