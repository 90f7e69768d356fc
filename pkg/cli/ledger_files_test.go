package cli

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestLedgerVerifyReadsBounded: the 1 MiB cap was checked after
// os.ReadFile had read the whole file: a 300 MB file took 300 MB of memory
// before it was refused, /dev/zero ran the process out of memory, and a
// FIFO with no writer blocked for ever. The same read backs gate --ledger
// and --base-ledger.
func TestLedgerVerifyReadsBounded(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "ledger.yml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip(err)
	}
	done := make(chan result, 1)
	go func() { done <- run(t, fixedClock, "ledger", "verify", fifo) }()
	select {
	case r := <-done:
		if r.code != 1 || !strings.Contains(r.stderr, "not a regular file") {
			t.Errorf("FIFO: exit %d: %s", r.code, r.stderr)
		}
	case <-time.After(3 * time.Second):
		// Unblock the reader so that the test ends.
		if f, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
			f.Close()
		}
		t.Errorf("ledger verify of a FIFO blocked: it reads before it checks")
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
