package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMergeGroup: a required check must also run on merge_group, or the
// merge queue waits for it. mode auto gates the queue's commit against the
// queue's base branch; without base-results and head-results the error
// says a merge group needs them; a payload without SHAs is refused.
func TestMergeGroup(t *testing.T) {
	payload := `{"action":"checks_requested","merge_group":{"head_sha":"` + mergeSHA + `","head_ref":"refs/heads/gh-readonly-queue/release/pr-42-` + headSHA + `","base_sha":"` + baseSHA + `","base_ref":"refs/heads/release"},"repository":{"full_name":"acme/shop","default_branch":"main"}}`
	load := func(t *testing.T, payload string, inputs map[string]string) (*Config, error) {
		ev := filepath.Join(t.TempDir(), "event.json")
		os.WriteFile(ev, []byte(payload), 0o644)
		env := map[string]string{
			"GITHUB_ACTIONS": "true", "GITHUB_EVENT_NAME": "merge_group", "GITHUB_EVENT_PATH": ev,
			"GITHUB_REPOSITORY": "acme/shop", "GITHUB_SHA": mergeSHA, "INPUT_GITHUB-TOKEN": testToken,
		}
		for k, v := range inputs {
			env["INPUT_"+strings.ToUpper(k)] = v
		}
		return Load(func(k string) string { return env[k] })
	}
	c, err := load(t, payload, map[string]string{"base-results": "results/base-*.xml", "head-results": "results/head-*.xml"})
	if err != nil {
		t.Fatal(err)
	}
	if mg := c.Event.MergeGroup; c.Mode != ModeGate || c.HeadSHA != mergeSHA || mg == nil || mg.BaseRef != "release" || mg.BaseSHA != baseSHA {
		t.Errorf("mode %s, head %s, group %+v; want gate on %s against release at %s", c.Mode, c.HeadSHA, mg, mergeSHA, baseSHA)
	}
	if _, err := load(t, payload, nil); err == nil || !strings.Contains(err.Error(), "a merge_group event needs both") {
		t.Errorf("no results: %v, want an error saying a merge group needs base-results and head-results", err)
	}
	if _, err := load(t, `{"merge_group":{"head_sha":"x"}}`, map[string]string{"base-results": "b", "head-results": "h"}); err == nil ||
		!strings.Contains(err.Error(), "merge_group.head_sha") || !strings.Contains(err.Error(), "merge_group.base_ref") {
		t.Errorf("bad payload: %v", err)
	}
}
