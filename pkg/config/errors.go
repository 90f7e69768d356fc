package config

import (
	"fmt"
	"unicode/utf8"
)

// maxQuotedValue caps how much of a rejected value an error repeats.
const maxQuotedValue = 120

// InputError is a rejected input. Load joins every InputError it finds with
// errors.Join, so a user can fix all of them at once; errors.As finds them.
type InputError struct {
	Input  string // kebab-case input name, e.g. "lookback-days"
	Value  string // the rejected value; always "" for secret inputs
	Reason string // what is accepted, e.g. "want an integer from 1 to 400"
}

func (e *InputError) Error() string {
	if e.Value == "" {
		return fmt.Sprintf("input %s: %s", e.Input, e.Reason)
	}
	return fmt.Sprintf("input %s: got %q; %s", e.Input, clip(e.Value), e.Reason)
}

// EnvError is a problem with the runner's environment or event file, which
// the user does not set directly: GITHUB_RUN_ID, GITHUB_EVENT_PATH, ….
type EnvError struct {
	Name   string // environment variable or event field, e.g. "GITHUB_RUN_ID"
	Value  string // the rejected value, if any
	Reason string
}

func (e *EnvError) Error() string {
	if e.Value == "" {
		return fmt.Sprintf("%s: %s", e.Name, e.Reason)
	}
	return fmt.Sprintf("%s: got %q; %s", e.Name, clip(e.Value), e.Reason)
}

// clip shortens v to maxQuotedValue runes so a pasted file does not flood the log.
func clip(v string) string {
	if utf8.RuneCountInString(v) <= maxQuotedValue {
		return v
	}
	r := []rune(v)
	return string(r[:maxQuotedValue]) + "…"
}
