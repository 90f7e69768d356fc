package config

import (
	"github.com/flakegate/flakegate/pkg/ledger"
	"strings"
	"testing"
)

// TestEmptyTokenWarnsOfWhatIsNotRead: with an empty github-token, a report
// of local results and a gate without a pull request still run, reading
// less; the configuration says what, so nothing is left out unsaid.
func TestEmptyTokenWarnsOfWhatIsNotRead(t *testing.T) {
	for _, tc := range []struct {
		name, event, payload string
		inputs               map[string]string
		want                 string // "" wants no warning
	}{
		{"report of results", "schedule", `{}`, map[string]string{"mode": "report", "results": "r/*.xml"}, "the last report is not read"},
		{"report, no upload", "schedule", `{}`, map[string]string{"mode": "report", "results": "r/*.xml", "upload-artifact": "false"}, "no trend; leave"},
		{"gate, dispatch", "workflow_dispatch", `{}`, map[string]string{"mode": "gate", "base-results": "b/*.xml", "head-results": "h/*.xml"}, "no base-branch runs"},
		{"gate, dispatch, history", "workflow_dispatch", `{}`, map[string]string{"mode": "gate", "base-results": "b/*.xml", "head-results": "h/*.xml", "history": "x/*.xml"}, "carried in the last report is not read"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.inputs["github-token"] = ""
			c, err := Load(runner{event: tc.event, payload: tc.payload, inputs: tc.inputs}.getenv(t))
			if err != nil {
				t.Fatal(err)
			}
			got := strings.Join(c.Warnings, "\n")
			if !strings.Contains(got, tc.want) {
				t.Errorf("warnings = %q, want one with %q", got, tc.want)
			}
		})
	}
	// With the token, no warning.
	c, err := Load(runner{event: "schedule", payload: `{}`, inputs: map[string]string{"mode": "report", "results": "r/*.xml"}}.getenv(t))
	if err != nil || len(c.Warnings) != 0 {
		t.Errorf("with a token: warnings %q, err %v", c.Warnings, err)
	}
}

// TestLocalGlobsClimbingOutFailEarly: a results glob that climbs out of the
// workspace is a bad input, refused with the others before any API call
// (DESIGN.md, Inputs), not once the previous report has been downloaded.
func TestLocalGlobsClimbingOutFailEarly(t *testing.T) {
	for _, in := range []string{"results", "base-results", "head-results", "history"} {
		_, err := Load(runner{event: "schedule", payload: `{}`, inputs: map[string]string{in: "ok/*.xml\n../b/*.xml"}}.getenv(t))
		want := "input " + in + `: got "../b/*.xml"; climbs out of the workspace`
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want %q", in, err, want)
		}
	}
	for _, ok := range []string{"a/../b/*.xml", "/abs/*.xml", "..x/*.xml"} {
		if _, err := Load(runner{event: "schedule", payload: `{}`, inputs: map[string]string{"results": ok}}.getenv(t)); err != nil {
			t.Errorf("results %q: %v", ok, err)
		}
	}
}

// TestDefaultLedgerPath: the constant the action compares ledger-path
// with is the input's default and the ledger package's.
func TestDefaultLedgerPath(t *testing.T) {
	c, err := Load(runner{event: "schedule", payload: `{}`, inputs: map[string]string{}}.getenv(t))
	if err != nil {
		t.Fatal(err)
	}
	if c.LedgerPath != DefaultLedgerPath || DefaultLedgerPath != ledger.DefaultPath {
		t.Errorf("ledger-path default %q, DefaultLedgerPath %q, ledger.DefaultPath %q", c.LedgerPath, DefaultLedgerPath, ledger.DefaultPath)
	}
}
