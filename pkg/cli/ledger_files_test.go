package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestLedgerVerifyReadsBounded: the 1 MiB cap was checked after
// os.ReadFile had read the whole file: a 300 MB file took 300 MB of memory
// before it was refused, and /dev/zero ran the process out of memory. A
// device is refused before any read; a pipe, as a shell's process
// substitution gives one (--base-ledger <(git show …)), is read within
// the cap. The same read backs gate --ledger and --base-ledger.
func TestLedgerVerifyReadsBounded(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err == nil {
		r := run(t, fixedClock, "ledger", "verify", "/dev/zero")
		if r.code != 1 || !strings.Contains(r.stderr, "not a regular file") {
			t.Errorf("/dev/zero: exit %d: %s", r.code, r.stderr)
		}
	}
	ledger, err := os.ReadFile(filepath.Join("testdata", "ledger-self", "ledger.yml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		data []byte
		code int
		want string
	}{
		{"a ledger through a pipe", ledger, 0, "every entry verified"},
		{"2 MiB through a pipe", bytes.Repeat([]byte("# x\n"), 1<<19), 1, "larger than"},
	} {
		fifo := filepath.Join(t.TempDir(), "ledger.yml")
		if err := syscall.Mkfifo(fifo, 0o600); err != nil {
			t.Skip(err)
		}
		go func() {
			if f, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
				f.Write(tc.data) // the reader may stop early: an error here is expected then
				f.Close()
			}
		}()
		done := make(chan result, 1)
		go func() { done <- run(t, fixedClock, "ledger", "verify", fifo) }()
		select {
		case r := <-done:
			if r.code != tc.code || !strings.Contains(r.stdout+r.stderr, tc.want) {
				t.Errorf("%s: exit %d, want %d and %q: %s%s", tc.name, r.code, tc.code, tc.want, r.stdout, r.stderr)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: ledger verify still reading after 10 s", tc.name)
		}
	}
}

// TestBaseLedgerAlone: --base-ledger is "the one that exempts", and a
// user who gives it alone meant that ledger. The head's, not given, was
// read as absent: every entry was "removed" by the PR, an unfreeze error
// and a freeze-set violation, and the gate blocked.
func TestBaseLedgerAlone(t *testing.T) {
	dir := filepath.Join("testdata", "ledger-self")
	r := run(t, fixedClock, "gate", "--base", filepath.Join(dir, "base-*.xml"), "--head", filepath.Join(dir, "head-*.xml"),
		"--base-ledger", filepath.Join(dir, "ledger.yml"))
	if r.code != 0 || strings.Contains(r.stdout, "unfreeze") || strings.Contains(r.stdout, "freeze-set") || !strings.Contains(r.stdout, "no --ledger") {
		t.Errorf("--base-ledger alone: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}
