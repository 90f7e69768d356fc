package signature

import "testing"

func TestSameBugSameSignature(t *testing.T) {
	pairs := []struct{ name, a, b string }{
		{"timestamps", "timeout at 2026-11-30T10:00:01.123Z waiting for lock", "timeout at 2026-12-01T22:13:59Z waiting for lock"},
		{"addresses", "nil map write at 0xc000123abc", "nil map write at 0xc0004f0010"},
		{"identity hash", "expected com.acme.Foo@1b6d3586 to equal", "expected com.acme.Foo@4554617c to equal"},
		{"temp paths", "cannot open /tmp/pytest-of-ci/pytest-12/test_upload0/data.bin", "cannot open /tmp/pytest-of-ci/pytest-7/test_upload0/data.bin"},
		{"durations", "context deadline exceeded after 5.002s", "context deadline exceeded after 5.013s"},
		{"uuids", "order 3f2b8c1e-9a4d-4c6b-8e2f-1a2b3c4d5e6f not found", "order 9c1d2e3f-4a5b-4c6d-8e7f-a1b2c3d4e5f6 not found"},
		{"goroutines", "panic in goroutine 17 [running]", "panic in goroutine 203 [running]"},
		{"request ids", "request 5f3a9c2e1b7d8a6f failed", "request 0a1b2c3d4e5f6a7b failed"},
		{"windows temp", `cannot open C:\Users\bob\AppData\Local\Temp\pytest-3\x.txt`, `cannot open C:\Users\ci\AppData\Local\Temp\pytest-9\x.txt`},
		{"threads", "deadlock in pool-2-thread-7", "deadlock in pool-2-thread-12"},
		{"long numbers", "pid 123456 exited", "pid 654321 exited"},
	}
	for _, p := range pairs {
		if Of("E", p.a, "") != Of("E", p.b, "") {
			t.Errorf("%s: %q and %q differ:\n%q\n%q", p.name, p.a, p.b, Normalize("E", p.a, ""), Normalize("E", p.b, ""))
		}
	}
}

// TestTwoBugsStayApart guards against silent wrong merges, such as the one
// where stripping line numbers merged two distinct bugs.
func TestTwoBugsStayApart(t *testing.T) {
	pairs := []struct{ name, a, b string }{
		{"line numbers", "AssertionError\n at test_upload.py:42", "AssertionError\n at test_upload.py:57"},
		{"assertion values", "expected 3 but was 4", "expected 3 but was 5"},
		{"exception type", "", ""},
		{"short numbers", "HTTP 500 from /upload", "HTTP 503 from /upload"},
		{"frames", "at Foo.bar(Foo.java:10)\nat Foo.baz(Foo.java:20)", "at Foo.bar(Foo.java:10)\nat Foo.qux(Foo.java:20)"},
	}
	for _, p := range pairs {
		ta, tb := "E", "E"
		if p.name == "exception type" {
			ta, tb = "java.lang.NullPointerException", "java.lang.IllegalStateException"
		}
		if Of(ta, p.a, "") == Of(tb, p.b, "") {
			t.Errorf("%s: %q and %q share a signature: %q", p.name, p.a, p.b, Normalize(ta, p.a, ""))
		}
	}
}

func TestTextRepeatingMessage(t *testing.T) {
	if Of("E", "boom", "boom\nat a.go:1") != Of("E", "boom", "at a.go:1") {
		t.Error("a text that repeats the message changed the signature")
	}
	if got := Of("E", "m", ""); len(got) != len("sha256:")+64 {
		t.Errorf("Of() = %q, want sha256: and 64 hex digits", got)
	}
	if Short("sha256:0123456789abcdef") != "0123456789ab" {
		t.Error("Short")
	}
}
