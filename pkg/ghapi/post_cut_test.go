package ghapi_test

import (
	"context"
	"testing"

	"github.com/flakegate/flakegate/pkg/ghapi"
	"github.com/flakegate/flakegate/pkg/ghapi/ghfake"
)

// TestCreatedAnswerCutIsNotSentAgain: GitHub stored the comment and
// answered 201; the connection broke in the middle of the answer's body.
// The POST must not be sent again: the comment exists (an UpsertComment
// would find it by its marker next time). Since 46fbee6 the transport
// reads the body inside the attempt and retries the POST, so the pull
// request gets two comments.
func TestCreatedAnswerCutIsNotSentAgain(t *testing.T) {
	s := ghfake.New(t)
	r := s.Repo("octo/app")
	pr := r.AddPullRequest(ghfake.PullRequest{})
	s.Inject(ghfake.Fault{Kind: ghfake.DisconnectMidBody, Method: "POST", Path: "/repos/*/*/issues/*/comments"})
	c, _ := newClient(t, s, ghfake.Token, ghapi.Options{})
	_, err := c.CreateComment(context.Background(), repo, pr.Number, "hello")
	t.Logf("CreateComment: err %v", err)
	if n := len(r.Comments(pr.Number)); n != 1 {
		t.Errorf("%d comments after one CreateComment whose 201 was cut, want 1", n)
	}
}
