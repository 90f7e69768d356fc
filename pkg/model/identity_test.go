package model

import "testing"

func TestIdentity(t *testing.T) {
	for _, tc := range []struct {
		classname, name, suite, project string
		want, wantProject               string
	}{
		{"tests.test_a", "test_b", "pytest", "", "tests.test_a::test_b", "tests.test_a::test_b [-]"},
		{"", "help.phpt", "end-to-end", "tests/cli/help.phpt", "end-to-end::help.phpt", "end-to-end::help.phpt [tests/cli/help.phpt]"},
		{"tests/cart.spec.ts", "cart › adds an item", "tests/cart.spec.ts", "firefox",
			"tests/cart.spec.ts::cart › adds an item", "tests/cart.spec.ts::cart › adds an item [firefox]"},
		{"", "", "", "x", "::", ":: [x]"},
	} {
		id := TestID(tc.classname, tc.name, tc.suite)
		if id != tc.want {
			t.Errorf("TestID(%q, %q, %q) = %q, want %q", tc.classname, tc.name, tc.suite, id, tc.want)
		}
		if got := string(AppendTestID([]byte("prefix"), tc.classname, tc.name, tc.suite)); got != "prefix"+tc.want {
			t.Errorf("AppendTestID = %q", got)
		}
		if got := TestClass(tc.classname, tc.suite) + "::" + tc.name; got != tc.want {
			t.Errorf("TestClass: %q", got)
		}
		if got := ProjectTestID(id, tc.project); got != tc.wantProject {
			t.Errorf("ProjectTestID(%q, %q) = %q, want %q", id, tc.project, got, tc.wantProject)
		}
	}
}
func TestRefines(t *testing.T) {
	for _, tc := range []struct {
		id, base string
		want     bool
	}{
		{"c::n [junit-windows]", "c::n", true},
		{"c::n [chromium] [junit-windows]", "c::n", true},
		{"c::n [chromium] [junit-windows]", "c::n [chromium]", true},
		{"c::n", "c::n", false},
		{"c::n2 [a]", "c::n", false},
		{"c::n [a", "c::n", false},
		{"c::n []", "c::n", false},
		{"c::n[a]", "c::n", false},
	} {
		if got := Refines(tc.id, tc.base); got != tc.want {
			t.Errorf("Refines(%q, %q) = %v, want %v", tc.id, tc.base, got, tc.want)
		}
	}
}

func TestUnrefined(t *testing.T) {
	for id, want := range map[string]string{
		"c::n [junit-windows]":            "c::n",
		"c::n [chromium] [junit-windows]": "c::n [chromium]",
		"c::n":                            "",
		"c::n [a":                         "",
		"c::n[a]":                         "",
	} {
		got, ok := Unrefined(id)
		if got != want || ok != (want != "") {
			t.Errorf("Unrefined(%q) = %q, %v; want %q", id, got, ok, want)
		}
	}
}
