package config

import (
	"fmt"
	"log/slog"
)

// redacted is what a Secret prints as, whatever the verb.
const redacted = "***"

// Secret holds a credential (github-token, gemini-api-key, the runtime token).
// Printing it with any fmt verb, encoding it as JSON or text, or logging it
// with log/slog shows "***" (or "" when it is empty), so a Config can be
// printed without leaking. Value returns the credential itself.
type Secret struct{ v string }

// NewSecret wraps a credential.
func NewSecret(v string) Secret { return Secret{v: v} }

// Value returns the credential. Call it only where the credential is sent.
func (s Secret) Value() string { return s.v }

// IsSet reports whether the credential is non-empty.
func (s Secret) IsSet() bool { return s.v != "" }

// String returns "***", or "" when the secret is empty.
func (s Secret) String() string {
	if s.v == "" {
		return ""
	}
	return redacted
}

// GoString keeps %#v redacted.
func (s Secret) GoString() string { return fmt.Sprintf("config.Secret(%q)", s.String()) }

// Format redacts every verb, %x and %q included.
func (s Secret) Format(f fmt.State, verb rune) {
	switch verb {
	case 'v':
		if f.Flag('#') {
			_, _ = fmt.Fprint(f, s.GoString())
			return
		}
	case 'q':
		_, _ = fmt.Fprintf(f, "%q", s.String())
		return
	}
	_, _ = fmt.Fprint(f, s.String())
}

// MarshalText redacts the secret in encoding/json, YAML and similar encoders.
func (s Secret) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// LogValue redacts the secret in log/slog.
func (s Secret) LogValue() slog.Value { return slog.StringValue(s.String()) }
