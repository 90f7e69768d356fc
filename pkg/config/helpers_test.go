package config

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.yaml.in/yaml/v3"

	"github.com/flakegate/flakegate/pkg/gate"
	"github.com/flakegate/flakegate/pkg/publish"
)

// Values a runner would pass. The secrets are distinctive so a leak is easy
// to spot in any output.
const (
	testToken        = "ghs_TESTTOKENabcdef0123456789"
	testGeminiKey    = "AIzaTESTGEMINIKEY0123456789"
	testRuntimeToken = "eyJ0eXAiOiJKV1QiLCJhbGciOiJSUzI1NiJ9.RUNTIMETOKEN.sig"

	mergeSHA = "9999999999999999999999999999999999999999"
	headSHA  = "1111111111111111111111111111111111111111"
	baseSHA  = "2222222222222222222222222222222222222222"
)

// actionYAML is the subset of action.yml the tests read.
type actionYAML struct {
	Name        string            `yaml:"name"`
	Description string            `yaml:"description"`
	Author      string            `yaml:"author"`
	Branding    map[string]string `yaml:"branding"`
	Inputs      yaml.Node         `yaml:"inputs"`
	Outputs     map[string]struct {
		Description string `yaml:"description"`
	} `yaml:"outputs"`
	Runs struct {
		Using string `yaml:"using"`
		Image string `yaml:"image"`
	} `yaml:"runs"`
}

type actionInput struct {
	Name        string
	Description string  `yaml:"description"`
	Default     *string `yaml:"default"`
	Required    bool    `yaml:"required"`
}

var (
	actionOnce   sync.Once
	actionMeta   actionYAML
	actionInputs []actionInput
	actionErr    error
)

// loadActionYAML parses the repository's action.yml, keeping the inputs in
// file order.
func loadActionYAML(t *testing.T) (actionYAML, []actionInput) {
	t.Helper()
	actionOnce.Do(func() {
		data, err := os.ReadFile(filepath.Join("..", "..", "action.yml"))
		if err != nil {
			actionErr = err
			return
		}
		if actionErr = yaml.Unmarshal(data, &actionMeta); actionErr != nil {
			return
		}
		n := actionMeta.Inputs
		for i := 0; i+1 < len(n.Content); i += 2 {
			var in actionInput
			if actionErr = n.Content[i+1].Decode(&in); actionErr != nil {
				return
			}
			in.Name = n.Content[i].Value
			actionInputs = append(actionInputs, in)
		}
	})
	if actionErr != nil {
		t.Fatalf("action.yml: %v", actionErr)
	}
	return actionMeta, actionInputs
}

// runner builds the environment the GitHub runner gives a container action.
type runner struct {
	event   string            // GITHUB_EVENT_NAME
	payload string            // event file contents; "" writes no file
	inputs  map[string]string // input name → value; overrides action.yml defaults
	env     map[string]string // other variables; overrides the runner's
	// emptyInputs sets every input to "" (as `with: {x: ''}` does) instead of
	// its action.yml default; github-token still gets testToken.
	emptyInputs bool
}

func (r runner) getenv(t *testing.T) func(string) string {
	t.Helper()
	_, inputs := loadActionYAML(t)
	m := map[string]string{
		"GITHUB_ACTIONS":          "true",
		"CI":                      "true",
		"HOME":                    "/github/home",
		"GITHUB_EVENT_NAME":       r.event,
		"GITHUB_REPOSITORY":       "octo/widgets",
		"GITHUB_REPOSITORY_OWNER": "octo",
		"GITHUB_SHA":              mergeSHA,
		"GITHUB_REF":              "refs/heads/main",
		"GITHUB_REF_NAME":         "main",
		"GITHUB_WORKFLOW":         "flaky",
		"GITHUB_WORKFLOW_REF":     "octo/widgets/.github/workflows/flaky.yml@refs/heads/main",
		"GITHUB_JOB":              "flakegate",
		"GITHUB_ACTOR":            "octocat",
		"GITHUB_RUN_ID":           "8000000001",
		"GITHUB_RUN_ATTEMPT":      "2",
		"GITHUB_RUN_NUMBER":       "17",
		"GITHUB_API_URL":          "https://api.github.com",
		"GITHUB_SERVER_URL":       "https://github.com",
		"GITHUB_GRAPHQL_URL":      "https://api.github.com/graphql",
		"GITHUB_WORKSPACE":        "/github/workspace",
		"GITHUB_OUTPUT":           "/github/file_commands/set_output_1",
		"GITHUB_STEP_SUMMARY":     "/github/file_commands/step_summary_1",
		"GITHUB_RETENTION_DAYS":   "90",
		"ACTIONS_RUNTIME_TOKEN":   testRuntimeToken,
		"ACTIONS_RUNTIME_URL":     "https://pipelines.actions.githubusercontent.com/abc/",
		"ACTIONS_RESULTS_URL":     "https://results-receiver.actions.githubusercontent.com/",
	}
	for _, in := range inputs {
		v := ""
		if in.Default != nil && !r.emptyInputs {
			v = *in.Default
		}
		if in.Name == "github-token" {
			v = testToken // the runner evaluates ${{ github.token }}
		}
		// Upper-cased, hyphens kept: INPUT_GITHUB-TOKEN.
		m["INPUT_"+strings.ToUpper(in.Name)] = v
	}
	for k, v := range r.inputs {
		key := "INPUT_" + strings.ToUpper(k)
		if _, ok := m[key]; !ok {
			t.Fatalf("test sets input %q, which action.yml does not declare", k)
		}
		m[key] = v
	}
	if r.payload != "" {
		p := filepath.Join(t.TempDir(), "event.json")
		if err := os.WriteFile(p, []byte(r.payload), 0o600); err != nil {
			t.Fatal(err)
		}
		m["GITHUB_EVENT_PATH"] = p
	}
	for k, v := range r.env {
		m[k] = v
	}
	return func(k string) string { return m[k] }
}

// cmpSecrets compares Secret values by content.
var cmpSecrets = cmp.Comparer(func(a, b Secret) bool { return a.Value() == b.Value() })

// wantDefaults is the Config the defaults of action.yml give on a schedule
// event, written out by hand rather than derived from the code under test.
func wantDefaults() *Config {
	return &Config{
		RequestedMode:       ModeAuto,
		Mode:                ModeReport,
		GitHubToken:         NewSecret(testToken),
		LookbackDays:        7,
		MaxRuns:             200,
		ArtifactPatterns:    []string{"*junit*", "*test*result*", "*test*report*", "*testlogs*"},
		Threshold:           0.1,
		MinCommits:          5,
		InfraThreshold:      0.5,
		P1:                  0.9,
		Alpha:               0.05,
		Beta:                0.05,
		AlphaPR:             0.05,
		OnInconclusive:      gate.PolicyNeutral,
		LedgerPath:          ".github/flaky-ledger.yml",
		ProtectedPaths:      []string{"tests/**", "**/conftest.py", "pytest.ini"},
		ApprovalLabel:       "flaky-ledger-approved",
		DeclarationLabel:    "test-changes-declared",
		Comment:             publish.CommentAlways,
		CheckName:           "flakegate",
		CommentTag:          "flakegate",
		MaxAnnotations:      10,
		CheckRun:            false,
		UploadArtifact:      true,
		ArtifactName:        "flakegate-report",
		ReportDir:           "flakegate-report",
		TrackingIssue:       false,
		GeminiModel:         "gemini-3.8-flash",
		FailOnExpiredLedger: true,
		GitHub: GitHub{
			Actions:       true,
			EventName:     EventSchedule,
			Repository:    "octo/widgets",
			Owner:         "octo",
			Repo:          "widgets",
			SHA:           mergeSHA,
			Ref:           "refs/heads/main",
			RefName:       "main",
			Workflow:      "flaky",
			WorkflowRef:   "octo/widgets/.github/workflows/flaky.yml@refs/heads/main",
			Job:           "flakegate",
			Actor:         "octocat",
			RunID:         8000000001,
			RunAttempt:    2,
			RunNumber:     17,
			APIURL:        "https://api.github.com",
			ServerURL:     "https://github.com",
			GraphQLURL:    "https://api.github.com/graphql",
			Workspace:     "/github/workspace",
			Output:        "/github/file_commands/set_output_1",
			StepSummary:   "/github/file_commands/step_summary_1",
			RetentionDays: 90,
			RuntimeToken:  NewSecret(testRuntimeToken),
			RuntimeURL:    "https://pipelines.actions.githubusercontent.com/abc/",
			ResultsURL:    "https://results-receiver.actions.githubusercontent.com/",
		},
		Event:         Event{Name: EventSchedule, Schedule: "17 4 * * 1"},
		HeadSHA:       mergeSHA,
		DefaultBranch: "main", // a schedule runs on the default branch: GITHUB_REF_NAME
	}
}
