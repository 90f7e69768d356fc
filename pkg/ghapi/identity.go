package ghapi

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"

	"github.com/google/go-github/v60/github"
)

// identity is whom the token writes as, when GitHub says. A GITHUB_TOKEN and
// an app's installation token write as a bot (github-actions[bot],
// <app>[bot]) and may not ask: GET /user answers them 403 "Resource not
// accessible by integration". A personal access token, classic or
// fine-grained, writes as its owner, a User, whom GET /user names.
type identity struct {
	mu    sync.Mutex
	known bool   // GitHub answered, with a user or with a refusal
	login string // the token's owner; "" when GitHub would not say
}

// tokenLogin returns the login of the person the token belongs to, or ""
// when GitHub does not say (a GITHUB_TOKEN or an installation token) or
// could not be asked. It sends GET /user at most once per Client once
// GitHub has answered; a failure that may pass (a rate limit, a server or
// network error) leaves "" for this call and the question open for the
// next. The error is the context's only: nothing can be sent after it.
func (c *Client) tokenLogin(ctx context.Context) (string, error) {
	c.who.mu.Lock()
	defer c.who.mu.Unlock()
	if c.who.known {
		return c.who.login, nil
	}
	u, resp, err := c.gh.Users.Get(ctx, "")
	if err == nil {
		c.who.known, c.who.login = true, u.GetLogin()
		return c.who.login, nil
	}
	err = c.classify("the token's user", resp, err)
	if ctx.Err() != nil {
		return "", err
	}
	var api *APIError
	if errors.As(err, &api) && api.StatusCode < http.StatusInternalServerError {
		c.who.known = true // refused (401, 403, 404): asking again gets the same answer
	}
	return "", nil
}

// pickOurs picks the first of items (comments or issues, in the order GitHub
// lists them) that we wrote, by author, or the zero T when none is:
//   - with Options.CommentAuthor, only that login's;
//   - else the first a bot wrote, as a GITHUB_TOKEN or an app's token does;
//   - else, when some item is by a person, the first by the token's owner
//     (tokenLogin), which GitHub is asked only then: a personal access
//     token's comments are its owner's. When GitHub does not say who the
//     token is, a person's item is never ours.
func pickOurs[T any](ctx context.Context, c *Client, items []T, author func(T) *github.User) (T, error) {
	var zero T
	if c.opts.CommentAuthor != "" {
		for _, it := range items {
			if strings.EqualFold(author(it).GetLogin(), c.opts.CommentAuthor) {
				return it, nil
			}
		}
		return zero, nil
	}
	var people []T
	for _, it := range items {
		if author(it).GetType() == "Bot" {
			return it, nil
		}
		people = append(people, it)
	}
	if len(people) == 0 {
		return zero, nil
	}
	login, err := c.tokenLogin(ctx)
	if err != nil || login == "" {
		return zero, err
	}
	for _, it := range people {
		if strings.EqualFold(author(it).GetLogin(), login) {
			return it, nil
		}
	}
	return zero, nil
}
