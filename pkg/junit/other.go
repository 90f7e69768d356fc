package junit

// noResults names the root elements of XML that CI jobs write beside their
// JUnit reports, into the same directory or artifact, and that hold no test
// results: coverage and lint reports, build files and summaries. A file
// with such a root is refused with ParseError.Other set, so that the
// collection can leave it out without calling the evidence incomplete.
var noResults = map[string]string{
	"coverage":         "a coverage report: Cobertura, coverage.py or Clover",
	"report":           "a JaCoCo coverage report",
	"CoverageSession":  "an OpenCover coverage report",
	"results":          "a Microsoft Code Coverage or cppcheck report",
	"phpunit":          "PHPUnit's XML coverage or configuration",
	"checkstyle":       "a Checkstyle-format lint report",
	"BugCollection":    "a SpotBugs report",
	"pmd":              "a PMD report",
	"pmd-cpd":          "a PMD copy-paste report",
	"issues":           "an Android Lint report",
	"failsafe-summary": "Maven Failsafe's summary",
	"project":          "a build file: a Maven POM or an Ant project",
	"suite":            "a TestNG suite definition (testng-failed.xml)",
}

// otherResults names the root elements of other test tools' own formats.
// They hold results flakegate does not read, which the JUnit files beside
// them may or may not hold again: a file with such a root is refused with
// ParseError.Other and Results set, and stays unread, so that a gate does
// not pass on what it did not read; the message says how to get JUnit.
// (The collection leaves out TestNG's testng-results.xml beforehand where
// TestNG's or Surefire's JUnit reports of the same results are beside it.)
var otherResults = map[string]string{
	"testng-results": "TestNG's own report (its default JUnitReportReporter writes JUnit)",
	"test-run":       "an NUnit 3 report (the JunitXml.TestLogger logger writes JUnit)",
	"test-results":   "an NUnit 2 report",
	"assemblies":     "an xUnit.net report (the JunitXml.TestLogger logger writes JUnit)",
	"TestRun":        "a Visual Studio TRX or CppUnit report",
	"robot":          "Robot Framework's output.xml (its --xunit option writes JUnit)",
	"Catch2TestRun":  "Catch2's XML report (its -r junit option writes JUnit)",
	"TestLog":        "a Boost.Test log (its --logger=JUNIT option writes JUnit)",
	"Site":           "a CTest dashboard file (ctest --output-junit writes JUnit)",
}

// otherFormat says what XML with root element name is, and whether it holds
// test results, or "" when it is not a known format.
func otherFormat(name []byte) (what string, results bool) {
	if what := noResults[string(name)]; what != "" {
		return what, false
	}
	what = otherResults[string(name)]
	return what, what != ""
}
