package junit

// otherFormats names the root elements of XML that CI jobs write beside
// their JUnit reports, into the same directory or artifact, and that hold no
// JUnit results: coverage and lint reports, build files, summaries, and
// other test tools' own formats, whose results the JUnit files beside them
// hold again (Surefire writes testng-results.xml beside TEST-*.xml;
// "dotnet test --logger junit --logger nunit" writes both). A file with such
// a root is refused with ParseError.Other set, so that the collection can
// leave it out without calling the evidence incomplete. Any other root is an
// error of its own: a JUnit file with a damaged root looks like nothing here.
var otherFormats = map[string]string{
	"coverage":         "a coverage report: Cobertura, coverage.py or Clover",
	"report":           "a JaCoCo coverage report",
	"CoverageSession":  "an OpenCover coverage report",
	"checkstyle":       "a Checkstyle-format lint report",
	"BugCollection":    "a SpotBugs report",
	"pmd":              "a PMD report",
	"pmd-cpd":          "a PMD copy-paste report",
	"issues":           "an Android Lint report",
	"failsafe-summary": "Maven Failsafe's summary",
	"project":          "a build file: a Maven POM or an Ant project",
	"testng-results":   "TestNG's own report, whose results Surefire's TEST-*.xml hold",
	"test-run":         "an NUnit 3 report",
	"test-results":     "an NUnit 2 report",
	"assemblies":       "an xUnit.net report",
	"TestRun":          "a Visual Studio TRX report",
	"robot":            "Robot Framework's output.xml; its --xunit option writes JUnit",
	"Catch2TestRun":    "Catch2's XML report; its -r junit option writes JUnit",
	"TestLog":          "a Boost.Test log",
}

// otherFormat says what XML with root element name is, or "" when it is
// not one of otherFormats.
func otherFormat(name []byte) string {
	return otherFormats[string(name)]
}
