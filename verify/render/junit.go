package render

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"

	"github.com/rangekeeper/rangekeeper/verify"
)

// JUnit XML shapes (the subset Jenkins, GitLab and GitHub test reporters read).
type (
	junitSuites struct {
		XMLName  xml.Name     `xml:"testsuites"`
		Name     string       `xml:"name,attr"`
		Tests    int          `xml:"tests,attr"`
		Failures int          `xml:"failures,attr"`
		Errors   int          `xml:"errors,attr"`
		Skipped  int          `xml:"skipped,attr"`
		Time     string       `xml:"time,attr"`
		Suites   []junitSuite `xml:"testsuite"`
	}
	junitSuite struct {
		Name       string          `xml:"name,attr"`
		Tests      int             `xml:"tests,attr"`
		Failures   int             `xml:"failures,attr"`
		Errors     int             `xml:"errors,attr"`
		Skipped    int             `xml:"skipped,attr"`
		Time       string          `xml:"time,attr"`
		Timestamp  string          `xml:"timestamp,attr,omitempty"`
		Properties []junitProperty `xml:"properties>property"`
		Cases      []junitCase     `xml:"testcase"`
	}
	junitProperty struct {
		Name  string `xml:"name,attr"`
		Value string `xml:"value,attr"`
	}
	junitCase struct {
		Class   string        `xml:"classname,attr"`
		Name    string        `xml:"name,attr"`
		Time    string        `xml:"time,attr"`
		Failure *junitProblem `xml:"failure,omitempty"`
		Error   *junitProblem `xml:"error,omitempty"`
		Skipped *junitProblem `xml:"skipped,omitempty"`
		Out     string        `xml:"system-out,omitempty"`
	}
	junitProblem struct {
		Message string `xml:"message,attr"`
		Type    string `xml:"type,attr,omitempty"`
		Text    string `xml:",chardata"`
	}
)

// JUnit writes the run as one test suite: a case per profile axis, per check (failed when
// reached at or above --fail-on), for the findings at --fail-on, for teardown, and for the run
// itself (an error when it could not verify), so a CI test report shows what failed and why.
func JUnit(w io.Writer, r verify.Result) error {
	s := junitSuite{Name: "rangekeeper verify " + r.Spec, Time: seconds(r), Properties: []junitProperty{
		{"run", r.RunID}, {"sandbox", r.SandboxID}, {"expected", r.Expected.String()}, {"measured", r.Measured.String()},
		{"outcome", r.Outcome}, {"exit", fmt.Sprint(r.Exit)},
	}}
	if !r.Started.IsZero() {
		s.Timestamp = r.Started.UTC().Format("2006-01-02T15:04:05")
	}
	for _, a := range r.Axes {
		c := junitCase{Class: "profile", Name: fmt.Sprintf("%s is at least %s", a.Axis, dash(a.Expected)), Time: "0"}
		switch {
		case a.Expected == "":
			c.Skipped = &junitProblem{Message: "not expected"}
		case a.Measured == "":
			c.Skipped = &junitProblem{Message: "not measured", Text: strings.Join(a.Why, "\n")}
		case a.Weaker:
			c.Failure = &junitProblem{Message: fmt.Sprintf("measured %s, expected %s", a.Measured, a.Expected), Type: "weaker", Text: strings.Join(a.Why, "\n")}
		}
		s.Cases = append(s.Cases, c)
	}
	for _, ch := range r.Checks {
		c := junitCase{Class: "check." + ch.Member, Name: ch.ID + " " + ch.What, Time: "0"}
		switch ch.Status {
		case verify.Reached:
			msg := fmt.Sprintf("%s reached %s (%s)", ch.Member, ch.What, ch.Severity)
			if ch.Severity >= r.FailOn {
				c.Failure = &junitProblem{Message: msg, Type: ch.ID, Text: strings.Join(ch.Evidence, "\n")}
			} else { // below --fail-on: reported, not failed (it does not fail the run either)
				c.Out = msg + "\n" + strings.Join(ch.Evidence, "\n")
			}
		case verify.NotTested:
			c.Skipped = &junitProblem{Message: strings.Join(ch.Evidence, "; ")}
		}
		s.Cases = append(s.Cases, c)
	}
	var over []string
	for _, f := range r.Findings {
		if f.Severity >= r.FailOn && !strings.HasPrefix(f.RuleID, "VFY-PROFILE-") {
			where := f.Member
			if f.File != "" {
				where = fmt.Sprintf("%s:%d", f.File, f.Line)
			}
			over = append(over, fmt.Sprintf("%s %s %s %s: %s", strings.ToUpper(f.Severity.String()), f.RuleID, f.Source, where, f.Message))
		}
	}
	fc := junitCase{Class: "findings", Name: "no finding at or above " + r.FailOn.String(), Time: "0"}
	if len(over) > 0 {
		fc.Failure = &junitProblem{Message: fmt.Sprintf("%d finding(s) at or above %s", len(over), r.FailOn), Type: "findings", Text: strings.Join(over, "\n")}
	}
	s.Cases = append(s.Cases, fc)
	td := junitCase{Class: "teardown", Name: "nothing left with the run label", Time: "0"}
	switch {
	case r.Teardown.Kept:
		td.Skipped = &junitProblem{Message: "kept (--keep): " + r.Teardown.Command}
	case !r.Teardown.Remaining.Zero() || r.Teardown.Error != "":
		td.Error = &junitProblem{Message: fmt.Sprintf("%s left with the run label", r.Teardown.Remaining), Text: r.Teardown.Error + "\n" + r.Teardown.Command}
	}
	s.Cases = append(s.Cases, td)
	rc := junitCase{Class: "verify", Name: "the sandbox was stood up, probed and measured", Time: seconds(r)}
	if r.Exit == verify.ExitCouldNotRun || r.Exit == verify.ExitBadInput {
		rc.Error = &junitProblem{Message: r.Outcome + ": " + r.Reason, Type: r.Outcome}
	}
	s.Cases = append(s.Cases, rc)
	for _, c := range s.Cases {
		s.Tests++
		switch {
		case c.Failure != nil:
			s.Failures++
		case c.Error != nil:
			s.Errors++
		case c.Skipped != nil:
			s.Skipped++
		}
	}
	doc := junitSuites{Name: "rangekeeper verify", Tests: s.Tests, Failures: s.Failures, Errors: s.Errors, Skipped: s.Skipped, Time: s.Time, Suites: []junitSuite{s}}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

func seconds(r verify.Result) string {
	if r.Finished.IsZero() || r.Started.IsZero() {
		return "0"
	}
	return fmt.Sprintf("%.3f", r.Finished.Sub(r.Started).Seconds())
}
