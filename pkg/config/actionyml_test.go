package config

import (
	"slices"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestActionYAMLMatchesInputs keeps action.yml and this package in step:
// the same inputs, in the same order, with the same defaults.
func TestActionYAMLMatchesInputs(t *testing.T) {
	meta, yamlInputs := loadActionYAML(t)

	var yamlNames, goNames []string
	for _, in := range yamlInputs {
		yamlNames = append(yamlNames, in.Name)
	}
	goInputs := Inputs()
	for _, in := range goInputs {
		goNames = append(goNames, in.Name)
	}
	if diff := cmp.Diff(goNames, yamlNames); diff != "" {
		t.Fatalf("inputs differ (-Inputs() +action.yml):\n%s", diff)
	}

	for i, y := range yamlInputs {
		g := goInputs[i]
		if y.Description == "" {
			t.Errorf("input %s has no description", y.Name)
		}
		if y.Required {
			t.Errorf("input %s is required; every input must be optional with a default", y.Name)
		}
		if y.Default == nil {
			t.Errorf("input %s has no default", y.Name)
			continue
		}
		want := g.Default
		if y.Name == "github-token" {
			// Evaluated by the runner; Load sees the token itself.
			want = "${{ github.token }}"
			if !g.Secret {
				t.Error("github-token is not marked secret")
			}
		}
		if *y.Default != want {
			t.Errorf("input %s: action.yml default %q, Load's default %q", y.Name, *y.Default, want)
		}
	}

	var secrets []string
	for _, in := range goInputs {
		if in.Secret {
			secrets = append(secrets, in.Name)
		}
	}
	if diff := cmp.Diff([]string{"github-token", "gemini-api-key"}, secrets); diff != "" {
		t.Errorf("secret inputs (-want +got):\n%s", diff)
	}

	var outputs []string
	for name, o := range meta.Outputs {
		outputs = append(outputs, name)
		if o.Description == "" {
			t.Errorf("output %s has no description", name)
		}
	}
	sort.Strings(outputs)
	if diff := cmp.Diff([]string{"blocking-count", "check-url", "comment-url", "failed-count", "flaky-count", "inconclusive-count", "report-dir", "report-json", "summary-path", "tests-count", "verdict", "verdict-json"}, outputs); diff != "" {
		t.Errorf("outputs (-want +got):\n%s", diff)
	}

	if meta.Name == "" || meta.Description == "" || meta.Author == "" {
		t.Errorf("name, description and author must be set: %q %q %q", meta.Name, meta.Description, meta.Author)
	}
	// GitHub Marketplace accepts these branding colours only.
	colors := []string{"white", "black", "yellow", "blue", "green", "orange", "red", "purple", "gray-dark"}
	if meta.Branding["icon"] == "" || !slices.Contains(colors, meta.Branding["color"]) {
		t.Errorf("branding = %v, want an icon and one of %v", meta.Branding, colors)
	}
	if meta.Runs.Using != "docker" || meta.Runs.Image == "" {
		t.Errorf("runs = %+v, want using: docker with an image", meta.Runs)
	}
}
