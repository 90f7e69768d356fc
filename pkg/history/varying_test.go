package history

import "testing"

func TestVaryingKey(t *testing.T) {
	for _, c := range []struct{ id, key string }{
		{"c::prop[seed=8812]", "c::prop[seed=…]"},
		{"c::prop[seed=42]", ""},
		{"c::testTotal(Money)[1] Money@6ee12bac", "c::testTotal(Money)[1] Money@…"},
		{"c::t[Money@14ae5a5]", "c::t[Money@…]"},
		{"c::mail to user@example.com", ""},
		{"c::order 9b3e0000-1c2d-4e5f-8a9b-000000abc000 is shipped", "c::order … is shipped"},
		{"c::obj at 0x7f3a2c1b9e40", "c::obj at 0x…"},
		{"c::blob 3fa9c2d1e0b7 read", "c::blob … read"},
		{"c::deadbeefcafe", ""},             // letters only: a word
		{"c::abz12345", "c::abz…"},          // digits inside a word
		{"c::x_2026_12_03", "c::x_…_12_03"}, // a date: only the year is four digits
		{"tests.test_module_0042::test_case_0017[p-3]", "tests.test_module_…::test_case_…[p-3]"},
		{"c::value 0.7281934", "c::value 0.…"},
		{"c::plain", ""},
	} {
		key, ok := VaryingKey(c.id)
		want := c.key
		if want == "" {
			want = c.id
		}
		if key != want || ok != (c.key != "") {
			t.Errorf("VaryingKey(%q) = %q, %v; want %q, %v", c.id, key, ok, want, c.key != "")
		}
	}
}

// TestVaryingTimestamp: a date and time is one varying part, not its year
// alone ("…-12-03 09:15:42.…" differs in every run).
func TestVaryingTimestamp(t *testing.T) {
	for _, c := range []struct{ id, key string }{
		{"c::report[2026-12-03 09:15:42.123456]", "c::report[…]"},
		{"c::report(LocalDateTime)[1] 2026-12-03T09:15:42.123456789", "c::report(LocalDateTime)[1] …"},
		{"c::at 2026-12-03T09:15:42Z done", "c::at … done"},
		{"c::at 2026-12-03T09:15:42+01:00", "c::at …"},
		{"c::on 2026-12-03", "c::on …"},
		{"c::at 09:15:42", "c::at …"},
		{"c::x_2026_12_03", "c::x_…_12_03"},
		{"c::ratio 123:45:67", "c::ratio 123:45:67"}, // not a time of day
		{"c::v 1:2:3", "c::v 1:2:3"},
	} {
		if key, _ := VaryingKey(c.id); key != c.key {
			t.Errorf("VaryingKey(%q) = %q, want %q", c.id, key, c.key)
		}
	}
}
