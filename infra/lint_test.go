package main

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// cfnLintAllowed are the cfn-lint findings (rule ids) accepted in the
// synthesized stages and the SAM template, each with its reason; any
// other finding, and every error, fails the test. Informational findings
// count too (cfnLintInclude): I3011, a log group or queue without an
// explicit DeletionPolicy and UpdateReplacePolicy, fails.
var cfnLintAllowed = map[string]string{
	// A DependsOn already implied by a GetAtt or Ref: the CDK adds it (a
	// function's dependency on its role's default policy), and it is
	// harmless.
	"W3005": "the CDK's explicit DependsOn beside an implicit one (a function on its role's policy)",
	// A style preference: the CDK writes every string with a token in it
	// (ARNs, the API's URL) as an Fn::Join with an empty delimiter.
	"I1022": "the CDK's Fn::Join with an empty delimiter where cfn-lint prefers Fn::Sub",
}

// cfnLintInclude are the rule ids (prefixes) cfn-lint checks beyond its
// defaults (errors and warnings): every informational rule.
var cfnLintInclude = []string{"I"}

// cfnLint runs cfn-lint on a template file and returns its findings; the
// test is skipped, naming how to install it, where cfn-lint is missing.
func cfnLint(t *testing.T, path string) []cfnFinding {
	t.Helper()
	bin, err := exec.LookPath("cfn-lint")
	if err != nil {
		t.Skip("cfn-lint is not installed: pip install cfn-lint aws-sam-translator")
	}
	args := append([]string{"--format", "json", "--include-checks"}, cfnLintInclude...)
	out, err := exec.Command(bin, append(args, "--", path)...).Output()
	var exit *exec.ExitError
	if err != nil && !(errors.As(err, &exit) && len(out) > 0) { // findings exit non-zero
		t.Fatalf("cfn-lint %s: %v", path, err)
	}
	var found []cfnFinding
	if err := json.Unmarshal(out, &found); err != nil {
		t.Fatalf("cfn-lint %s answered %.300s: %v", path, out, err)
	}
	return found
}

type cfnFinding struct {
	Level    string
	Message  string
	Rule     struct{ Id string }
	Location struct{ Path []any }
}

// checkFindings fails on every finding not allowed.
func checkFindings(t *testing.T, what string, found []cfnFinding) {
	t.Helper()
	counts := map[string]int{}
	for _, f := range found {
		if _, ok := cfnLintAllowed[f.Rule.Id]; ok && f.Level != "Error" {
			counts[f.Rule.Id]++
			continue
		}
		t.Errorf("%s: cfn-lint %s %s at %v: %s", what, f.Level, f.Rule.Id, f.Location.Path, f.Message)
	}
	t.Logf("%s: %d findings, allowed: %v", what, len(found), counts)
}

func TestBothStagesLintCleanWithCfnLint(t *testing.T) {
	stages(t, func(t *testing.T, s *synthesized) {
		path := filepath.Join(t.TempDir(), "template.json")
		if err := os.WriteFile(path, []byte(s.t.raw), 0o644); err != nil {
			t.Fatal(err)
		}
		checkFindings(t, "the synthesized stack", cfnLint(t, path))
	})
}

// The SAM template is linted as cfn-lint reads a SAM template: transformed
// by aws-sam-translator first, its local CodeUris replaced by S3 locations
// as `sam package` would.
func TestTheSAMTemplateLintsCleanWithCfnLintAfterTheTransform(t *testing.T) {
	checkFindings(t, "template/template.yaml", cfnLint(t, filepath.Join("..", "template", "template.yaml")))
}
