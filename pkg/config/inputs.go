package config

import (
	"context"
	"fmt"
	"reflect"
	"strings"

	"github.com/sethvargo/go-envconfig"
	"github.com/sethvargo/go-githubactions"
)

// rawInputs is every input of action.yml as the runner passes it, before
// validation. The env key is the input name upper-cased with '-' turned into
// '_' (go-envconfig refuses '-'); inputLookuper maps it back. The default= part
// of each tag is the input's default and must equal action.yml's, which
// TestActionYAMLMatchesInputs checks.
//
// github-token has no default here: its action.yml default, ${{ github.token }},
// is evaluated by the runner, and go-envconfig would expand "$" in a default.
type rawInputs struct {
	GitHubToken         string `env:"GITHUB_TOKEN" input:"secret"`
	Mode                string `env:"MODE,default=auto"`
	Workflows           string `env:"WORKFLOWS"`
	Branch              string `env:"BRANCH"`
	LookbackDays        string `env:"LOOKBACK_DAYS,default=7"`
	MaxRuns             string `env:"MAX_RUNS,default=200"`
	ArtifactPattern     string `env:"ARTIFACT_PATTERN,default=*junit*,*test*result*,*test*report*,*testlogs*"`
	Results             string `env:"RESULTS"`
	BaseResults         string `env:"BASE_RESULTS"`
	HeadResults         string `env:"HEAD_RESULTS"`
	History             string `env:"HISTORY"`
	Threshold           string `env:"THRESHOLD,default=0.1"`
	MinCommits          string `env:"MIN_COMMITS,default=5"`
	InfraThreshold      string `env:"INFRA_THRESHOLD,default=0.5"`
	P1                  string `env:"P1,default=0.9"`
	Alpha               string `env:"ALPHA,default=0.05"`
	Beta                string `env:"BETA,default=0.05"`
	AlphaPR             string `env:"ALPHA_PR,default=0.05"`
	OnInconclusive      string `env:"ON_INCONCLUSIVE,default=neutral"`
	LedgerPath          string `env:"LEDGER_PATH,default=.github/flaky-ledger.yml"`
	ProtectedPaths      string `env:"PROTECTED_PATHS,default=tests/**\n**/conftest.py\npytest.ini"`
	ProtectedNewFiles   string `env:"PROTECTED_NEW_FILES,default=declare"`
	ApprovalLabel       string `env:"APPROVAL_LABEL,default=flaky-ledger-approved"`
	DeclarationLabel    string `env:"DECLARATION_LABEL,default=test-changes-declared"`
	Comment             string `env:"COMMENT,default=always"`
	CommentTag          string `env:"COMMENT_TAG"`
	CheckRun            string `env:"CHECK_RUN,default=false"`
	CheckName           string `env:"CHECK_NAME,default=flakegate"`
	MaxAnnotations      string `env:"MAX_ANNOTATIONS,default=10"`
	UploadArtifact      string `env:"UPLOAD_ARTIFACT,default=true"`
	ArtifactName        string `env:"ARTIFACT_NAME,default=flakegate-report"`
	ReportDir           string `env:"REPORT_DIR,default=flakegate-report"`
	TrackingIssue       string `env:"TRACKING_ISSUE,default=false"`
	GeminiAPIKey        string `env:"GEMINI_API_KEY" input:"secret"`
	GeminiModel         string `env:"GEMINI_MODEL,default=gemini-3.8-flash"`
	FailOnExpiredLedger string `env:"FAIL_ON_EXPIRED_LEDGER,default=true"`
}

// Input describes one input of action.yml as this package understands it.
type Input struct {
	Name    string // kebab-case, as in action.yml: "lookback-days"
	Default string // "" where the runner supplies the value (github-token)
	Secret  bool   // the value must be masked and never printed
}

// Inputs lists every input Load reads, in action.yml order, with the defaults
// Load applies when an input is empty.
func Inputs() []Input {
	t := reflect.TypeFor[rawInputs]()
	out := make([]Input, 0, t.NumField())
	for f := range t.Fields() {
		key, def, _ := strings.Cut(f.Tag.Get("env"), ",")
		out = append(out, Input{
			Name:    inputName(key),
			Default: strings.TrimPrefix(def, "default="),
			Secret:  f.Tag.Get("input") == "secret",
		})
	}
	return out
}

// inputName maps an envconfig key to its action.yml input name:
// LOOKBACK_DAYS → lookback-days.
func inputName(key string) string {
	return strings.ToLower(strings.ReplaceAll(key, "_", "-"))
}

// inputLookuper lets go-envconfig read action inputs through go-githubactions,
// which reads INPUT_<NAME> with the hyphens kept and trims the value. An empty
// input counts as unset, so the tag's default applies: the runner sets every
// declared input, to "" when it has no value.
type inputLookuper struct{ action *githubactions.Action }

func (l inputLookuper) Lookup(key string) (string, bool) {
	v := l.action.GetInput(inputName(key))
	return v, v != ""
}

// readInputs decodes every input, defaults applied, without validating it.
func readInputs(action *githubactions.Action) (rawInputs, error) {
	var in rawInputs
	err := envconfig.ProcessWith(context.Background(), &envconfig.Config{
		Target:   &in,
		Lookuper: inputLookuper{action: action},
	})
	if err != nil {
		// Only a malformed struct tag can fail here: every field is a string.
		return in, fmt.Errorf("reading inputs: %w", err)
	}
	return in, nil
}

// DefaultLedgerPath is the ledger-path input's default (the LEDGER_PATH
// tag above), ledger.DefaultPath.
const DefaultLedgerPath = ".github/flaky-ledger.yml"
