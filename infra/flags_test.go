package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// cdkFlagsNotRecommended are the feature flags of the pinned aws-cdk-lib
// that cdk.json sets to something other than their recommended value,
// each with its reason. Every other flag is set as recommended.
var cdkFlagsNotRecommended = map[string]string{}

// obsoleteCDKFlags are the flags the CDK CLI leaves out of its count of
// unconfigured flags (aws-cdk's FlagOperations: OBSOLETE_FLAGS).
var obsoleteCDKFlags = []string{
	"@aws-cdk/core:enableStackNameDuplicates",
	"@aws-cdk/aws-s3:grantWriteWithoutAcl",
	"@aws-cdk/aws-kms:defaultKeyPolicies",
}

// cdkFlag is a feature flag of the cloud assembly's feature flag report.
type cdkFlag struct {
	RecommendedValue        any
	UnconfiguredBehavesLike struct{ V2 any }
}

// flagReport is the feature flag report of a synthesized cloud assembly:
// every feature flag of the aws-cdk-lib the app runs (the version pinned
// in go.mod), with its recommended value and how it behaves unset. The CDK
// CLI reads it to print "N feature flags are not configured".
func flagReport(t *testing.T, outdir string) map[string]cdkFlag {
	t.Helper()
	var manifest struct {
		Artifacts map[string]struct {
			Type       string
			Properties struct {
				Module string
				Flags  map[string]cdkFlag
			}
		}
	}
	b, err := os.ReadFile(filepath.Join(outdir, "manifest.json"))
	if err == nil {
		err = json.Unmarshal(b, &manifest)
	}
	if err != nil {
		t.Fatalf("the cloud assembly's manifest: %v", err)
	}
	for _, a := range manifest.Artifacts {
		if a.Type == "cdk:feature-flag-report" && a.Properties.Module == "aws-cdk-lib" && len(a.Properties.Flags) > 0 {
			return a.Properties.Flags
		}
	}
	t.Fatal("the cloud assembly has no feature flag report of aws-cdk-lib")
	return nil
}

// cdkJSONContext is the context of cdk.json, where the feature flags are set.
func cdkJSONContext(t *testing.T) map[string]any {
	t.Helper()
	var cdkJSON struct{ Context map[string]any }
	b, err := os.ReadFile("cdk.json")
	if err == nil {
		err = json.Unmarshal(b, &cdkJSON)
	}
	if err != nil {
		t.Fatalf("cdk.json: %v", err)
	}
	return cdkJSON.Context
}

// Every feature flag of the pinned aws-cdk-lib that the CDK CLI would count
// as not configured (unset, and behaving unset otherwise than recommended)
// is set in cdk.json, as recommended unless cdkFlagsNotRecommended says why
// not; a version of aws-cdk-lib with new flags fails here until cdk.json
// decides them.
func TestCdkJSONSetsEveryFeatureFlagOfThePinnedCDKLibAsRecommended(t *testing.T) {
	s := synth(t, map[string]string{CtxStage: string(Dev)})
	flags := flagReport(t, s.outdir)
	cdkContext := cdkJSONContext(t)
	var unconfigured []string
	for name, f := range flags {
		if slices.Contains(obsoleteCDKFlags, name) {
			continue
		}
		user, set := cdkContext[name]
		reason, excepted := cdkFlagsNotRecommended[name]
		switch {
		case !set && excepted:
			t.Errorf("%s: unset, but cdkFlagsNotRecommended has it (%s): set it in cdk.json", name, reason)
		case !set:
			behaves := f.UnconfiguredBehavesLike.V2 // the CLI's default: false
			if behaves == nil {
				behaves = false
			}
			if !jsonEqual(behaves, f.RecommendedValue) {
				unconfigured = append(unconfigured, name)
			}
		case excepted && jsonEqual(user, f.RecommendedValue):
			t.Errorf("%s: set to the recommended %s, yet cdkFlagsNotRecommended has it (%s)", name, js(user), reason)
		case !excepted && !jsonEqual(user, f.RecommendedValue):
			t.Errorf("%s: set to %s, recommended %s: set it as recommended, or add it to cdkFlagsNotRecommended with the reason", name, js(user), js(f.RecommendedValue))
		}
	}
	if len(unconfigured) > 0 {
		slices.Sort(unconfigured)
		t.Errorf("%d feature flags of the pinned aws-cdk-lib are not configured in cdk.json (the CDK CLI says so on every synth): %s",
			len(unconfigured), strings.Join(unconfigured, ", "))
	}
	for name := range cdkFlagsNotRecommended {
		if _, ok := flags[name]; !ok {
			t.Errorf("cdkFlagsNotRecommended has %s, which the pinned aws-cdk-lib does not have", name)
		}
	}
	for name := range cdkContext {
		if _, ok := flags[name]; !ok && strings.HasPrefix(name, "@aws-cdk") {
			t.Errorf("cdk.json sets %s, which is no feature flag of the pinned aws-cdk-lib", name)
		}
	}
}

// `make synth` runs the CDK CLI pinned in package.json on cdk.json's app,
// and the CLI finds no feature flag left unconfigured (it would print "N
// feature flags are not configured"): what the test above checks, seen
// through the CLI itself.
func TestMakeSynthSaysNoFeatureFlagIsUnconfigured(t *testing.T) {
	cdk, err := filepath.Abs(filepath.Join("..", "node_modules", ".bin", "cdk"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(cdk); err != nil {
		t.Skip("the CDK CLI is not installed (make synth installs it: npm ci)")
	}
	// As make synth: its CDK_ENV, the stage, quiet, no notices; the
	// assets are the tests'.
	cmd := exec.Command(cdk, "synth", "-c", CtxStage+"="+string(Dev), "-c", CtxAssets+"="+testAssets,
		"--output", t.TempDir(), "--quiet", "--no-notices")
	cmd.Env = append(os.Environ(), "CDK_DISABLE_VERSION_CHECK=1", "CDK_DISABLE_CLI_TELEMETRY=true",
		"AWS_EC2_METADATA_DISABLED=true", "JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION=20")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("cdk synth: %v\n%s", err, out)
	}
	if strings.Contains(string(out), "feature flag") {
		t.Errorf("cdk synth printed:\n%s", out)
	}
	t.Logf("cdk synth printed %d bytes", len(out))
}
