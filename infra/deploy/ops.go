package deploy

import (
	"fmt"
	"net/mail"
	"slices"
	"strconv"
	"strings"
)

// Tracing: every function is traced by AWS X-Ray (Lambda's active
// tracing) unless a deployment turns it off (CDK context tracing=false,
// SAM parameter Tracing=false: PassThrough, traced only when a caller
// already sampled the request), and a sampling rule scoped to the stack's
// functions (their names start with the stack's) sets how many requests
// are traced.
const (
	// DefaultTraceSampleRate is the share of requests traced beyond the
	// reservoir (CDK context traceSampleRate, SAM parameter
	// TraceSampleRate): 5%, X-Ray's default.
	DefaultTraceSampleRate = 0.05
	// DefaultTraceReservoir is how many requests a second are traced
	// before the rate applies (CDK context traceReservoir, SAM parameter
	// TraceReservoir): 1, X-Ray's default.
	DefaultTraceReservoir = 1
	// MaxTraceReservoir bounds the reservoir the context may set.
	MaxTraceReservoir = 100_000
	// SamplingRulePriority is the sampling rule's priority: before X-Ray's
	// default rule (10000), after any rule an account sets with a lower
	// number.
	SamplingRulePriority = 9000
	// TracingActive and TracingPassThrough are Lambda's tracing modes.
	TracingActive      = "Active"
	TracingPassThrough = "PassThrough"
	// TracingServiceType is the sampling rule's service type: the
	// functions' segments.
	TracingServiceType = "AWS::Lambda::Function"
)

// XRayActions let a function send its traces to X-Ray (what Lambda's
// active tracing and the application's own subsegments need); X-Ray
// supports no resource-level permissions.
var XRayActions = []string{"xray:PutTraceSegments", "xray:PutTelemetryRecords"}

// ParseSampleRate reads a trace sample rate: a fraction from 0 to 1.
func ParseSampleRate(s string) (float64, error) {
	r, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || !(r >= 0 && r <= 1) { // NaN too
		return 0, fmt.Errorf("want a fraction from 0 to 1")
	}
	return r, nil
}

// Log retention: every log group of a deployment (the functions', the
// HTTP API's access logs, the state machines') keeps its events this many
// days (CDK context logRetentionDays, SAM parameter LogRetentionDays).
const (
	// DevLogRetentionDays and ProdLogRetentionDays are the CDK stages'
	// defaults.
	DevLogRetentionDays  = 7
	ProdLogRetentionDays = 90
	// SAMLogRetentionDays is the SAM template's default: a development
	// stack, kept a month.
	SAMLogRetentionDays = 30
)

// LogRetentionDays are the retentions CloudWatch Logs accepts (its
// RetentionInDays values, never-expire left out: every log group expires).
var LogRetentionDays = []int{1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653}

// ParseLogRetentionDays reads a log retention: one of LogRetentionDays.
func ParseLogRetentionDays(s string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || !slices.Contains(LogRetentionDays, n) {
		return 0, fmt.Errorf("want one of the retentions CloudWatch Logs accepts: %s", joinInts(LogRetentionDays))
	}
	return n, nil
}

func joinInts(ns []int) string {
	var s []string
	for _, n := range ns {
		s = append(s, strconv.Itoa(n))
	}
	return strings.Join(s, ", ")
}

// MaxAlarmEmails is how many email addresses the alarm topic's
// subscriptions may name (CDK context alarmEmails, SAM parameter
// AlarmEmails, whose subscriptions are that many conditional slots);
// more subscribe to the topic (its ARN is an output) themselves.
const MaxAlarmEmails = 5

// ParseAlarmEmails reads a comma-separated list of email addresses (empty:
// none), refusing what is not a plain address, a repeated one, or more
// than MaxAlarmEmails.
func ParseAlarmEmails(s string) ([]string, error) {
	var out []string
	for _, a := range strings.Split(s, ",") {
		a = strings.TrimSpace(a)
		if a == "" {
			continue
		}
		parsed, err := mail.ParseAddress(a)
		if err != nil || parsed.Address != a || parsed.Name != "" || !strings.Contains(a[strings.LastIndex(a, "@")+1:], ".") {
			return nil, fmt.Errorf("%q is not an email address (name@domain.tld)", a)
		}
		if slices.Contains(out, a) {
			return nil, fmt.Errorf("%q is named twice", a)
		}
		out = append(out, a)
	}
	if len(out) > MaxAlarmEmails {
		return nil, fmt.Errorf("%d addresses, at most %d (subscribe more to the alarm topic yourself)", len(out), MaxAlarmEmails)
	}
	return out, nil
}

// The tenant lifecycle's objects in the bulk bucket: the operator (admin)
// function's export-org writes an organization's items and files under
// orgs/<org>/, and delete-org deletes its files under imports/<org>/,
// exports/<org>/ and orgs/<org>/. It may read, write and delete objects
// under those three prefixes (BulkTenantActions) and list them (only
// them: s3:prefix is conditioned).
const BulkOrgsPrefix = "orgs/"

// BulkTenantPrefixes are the prefixes the operator function's objects are
// under.
var BulkTenantPrefixes = []string{BulkImportsPrefix, BulkExportsPrefix, BulkOrgsPrefix}

// BulkTenantActions are what the operator function does with them.
var BulkTenantActions = []string{"s3:GetObject", "s3:PutObject", "s3:DeleteObject", "s3:AbortMultipartUpload"}

// BulkTenantListCondition is the condition of the operator function's
// s3:ListBucket: only keys under BulkTenantPrefixes.
func BulkTenantListCondition() map[string]any {
	var prefixes []any
	for _, p := range BulkTenantPrefixes {
		prefixes = append(prefixes, p+"*")
	}
	return map[string]any{"StringLike": map[string]any{"s3:prefix": prefixes}}
}
