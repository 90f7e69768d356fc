package signature

import "testing"

// BenchmarkOf normalises and hashes a typical failure: a timeout with a
// duration, a temp path and a short stack.
func BenchmarkOf(b *testing.B) {
	msg := "TimeoutError: timed out after 5.171s waiting for /tmp/pytest-of-ci/pytest-11/sock"
	text := msg + "\n  at tests/test_module_00.py:21\n  at conftest.py:88 in fixture\n  at lib/pool.py:120"
	for b.Loop() {
		Of("AssertionError", msg, text)
	}
}
