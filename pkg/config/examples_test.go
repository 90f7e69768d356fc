package config

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestWorkflowsLoad reads every workflow the README recommends
// (examples/) and the project's own, and loads the configuration each
// flakegate step would get on each event its workflow runs on: every
// input it sets must be declared in action.yml and accepted. actionlint
// cannot check a remote action's inputs, so nothing else would catch a
// quickstart whose input the action refuses.
func TestWorkflowsLoad(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "..", "examples", "*.yml"))
	own, _ := filepath.Glob(filepath.Join("..", "..", ".github", "workflows", "*.yml"))
	files = append(files, own...)
	steps := 0
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var wf struct {
			On   yaml.Node `yaml:"on"`
			Jobs map[string]struct {
				Steps []struct {
					Uses string            `yaml:"uses"`
					With map[string]string `yaml:"with"`
				} `yaml:"steps"`
			} `yaml:"jobs"`
		}
		if err := yaml.Unmarshal(b, &wf); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		events := workflowEvents(&wf.On)
		for job, j := range wf.Jobs {
			for _, st := range j.Steps {
				if st.Uses != "./" && !strings.HasPrefix(st.Uses, "flakegate/flakegate@") {
					continue
				}
				steps++
				inputs := map[string]string{}
				for k, v := range st.With {
					if strings.Contains(v, "${{") {
						continue // an expression: the runner's value, not the file's
					}
					inputs[k] = v
				}
				for _, ev := range events {
					r := runner{event: ev, inputs: inputs}
					switch ev {
					case "pull_request", "pull_request_target":
						r.payload = pullRequestPayload(`{"id": 1, "name": "widgets", "full_name": "octo/widgets", "fork": false}`, `"Fix"`)
					case "workflow_run":
						r.payload = workflowRunPayload("pull_request", `{"id": 2, "full_name": "forker/widgets", "fork": true}`, "[]")
					}
					if _, err := Load(r.getenv(t)); err != nil {
						t.Errorf("%s, job %s, on %s: %v", filepath.Base(file), job, ev, err)
					}
				}
			}
		}
	}
	if steps < 5 {
		t.Errorf("found %d flakegate steps in %d workflows; the examples hold at least 4 and ci.yml one", steps, len(files))
	}
}

// workflowEvents lists the events of a workflow's on: a name, a list or
// a map.
func workflowEvents(n *yaml.Node) []string {
	var out []string
	switch n.Kind {
	case yaml.ScalarNode:
		out = append(out, n.Value)
	case yaml.SequenceNode:
		for _, c := range n.Content {
			out = append(out, c.Value)
		}
	case yaml.MappingNode:
		for i := 0; i < len(n.Content); i += 2 {
			out = append(out, n.Content[i].Value)
		}
	}
	return slices.DeleteFunc(out, func(e string) bool { return e == "workflow_dispatch" })
}
