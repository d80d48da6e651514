// Package series stores metric series: dated points of a metric of a
// record (a company's revenue, a deal's ARR), several candidate points per
// date from different sources, and reads a series over a period, one point
// per bucket picked by a policy. A series (resource + key) is one
// partition whose sort key starts with the date, so a series and a period
// are one paged Query (store.MetricPartition, store.MetricDateRange).
package series

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/clock"
	"github.com/sourcebase/sourcebase/internal/ids"
	"github.com/sourcebase/sourcebase/internal/store"
)

// Limits of writes and reads.
const (
	// MaxBatch is the most points one write takes: one transaction.
	MaxBatch = 100
	// MaxPoints is the most points one series response holds; a read
	// that would return more is refused (400) before it reads further.
	MaxPoints = 5000
	// MaxCandidates is the most stored points one series read considers;
	// a period holding more is refused (400): narrow the period.
	MaxCandidates = 50000
)

// DryIDPrefix starts the placeholder id of a record a workflow's dry run
// would have created (runs.DryIDPrefix); a dry run's points may name one.
const DryIDPrefix = "dry_"

// PeriodTypes say what span a point's value covers.
var PeriodTypes = []string{"day", "month", "quarter", "year"}

// Policies pick the point of a date among its candidates.
const (
	PolicyLatest            = "latest"
	PolicyHighestConfidence = "highest_confidence"
	PolicyAll               = "all"
)

// Policies lists the policies, the default first.
var Policies = []string{PolicyLatest, PolicyHighestConfidence, PolicyAll}

// Granularities are the bucket sizes of a series read.
var Granularities = []string{"day", "week", "month", "quarter", "year"}

// KeyFormat is the format of a series' key.
const KeyFormat = "metric:<name> with a name of 1 to 100 letters, digits, '_', '-' or '.' (such as metric:revenue)"

// ResourceFormat is the format of a series' resource when types are the
// kinds of record that hold series.
func ResourceFormat(types []string) string {
	example := "companies"
	if len(types) > 0 {
		example = types[0]
	}
	return "<resourceType>:<id> with resourceType one of " + strings.Join(types, ", ") + " (such as " + example + ":cmp_01j...)"
}

var (
	resourcePattern = regexp.MustCompile(`^([a-z][a-z-]{0,49}):([A-Za-z0-9_-]{1,100})$`)
	keyPattern      = regexp.MustCompile(`^metric:[A-Za-z0-9_.-]{1,100}$`)
	currencyPattern = regexp.MustCompile(`^[A-Z]{3}$`)
)

// Point is one stored candidate value of a series at a date.
type Point struct {
	ID         string      `json:"id,omitempty"`
	Resource   string      `json:"resource"`
	Key        string      `json:"key"`
	Date       string      `json:"date"`
	Value      json.Number `json:"value"`
	Unit       *string     `json:"unit"`
	Currency   *string     `json:"currency"`
	Source     string      `json:"source"`
	Confidence *float64    `json:"confidence"`
	DealID     *string     `json:"dealId"`
	PeriodType *string     `json:"periodType"`
	CapturedOn clock.Time  `json:"capturedOn"`
}

// SeriesPoint is a point as a series read returns it.
type SeriesPoint struct {
	Date       string      `json:"date"`
	Value      json.Number `json:"value"`
	Unit       *string     `json:"unit"`
	Currency   *string     `json:"currency"`
	Source     string      `json:"source"`
	Confidence *float64    `json:"confidence"`
	CapturedOn clock.Time  `json:"capturedOn"`
	DealID     *string     `json:"dealId"`
}

// Series is the answer of a series read.
type Series struct {
	Resource string        `json:"resource"`
	Key      string        `json:"key"`
	Points   []SeriesPoint `json:"points"`
}

// ExistsFunc reports whether org has the record id of a resource type
// (one of the service's Types).
type ExistsFunc func(ctx context.Context, org, resourceType, id string) (bool, error)

// Service writes and reads metric series.
type Service struct {
	st     *store.Store
	exists ExistsFunc
	types  []string
	format string
	now    func() clock.Time
}

// NewService returns the service over st; types are the kinds of record
// (their plural path names) that hold series, from their declarations
// (resource.Def.Series), and exists checks the records points belong to.
func NewService(st *store.Store, exists ExistsFunc, types []string) *Service {
	return &Service{st: st, exists: exists, types: slices.Clone(types), format: ResourceFormat(types), now: clock.Now}
}

// Types are the kinds of record that hold series.
func (s *Service) Types() []string { return slices.Clone(s.types) }

// ParseResource splits "<resourceType>:<id>" with a resourceType of
// Types; false when it is not one.
func (s *Service) ParseResource(str string) (typ, id string, ok bool) {
	m := resourcePattern.FindStringSubmatch(str)
	if m == nil || !slices.Contains(s.types, m[1]) {
		return "", "", false
	}
	return m[1], m[2], true
}

// ValidKey reports whether s is "metric:<name>".
func ValidKey(s string) bool { return keyPattern.MatchString(s) }

// Write stores points (at most MaxBatch, decoded by DecodePoints) for org
// in one transaction: all or none. Each gets an id and capturedOn (now).
// Every point's resource and deal must be records of org: a 400 naming the
// point otherwise. With dryRun everything is checked and nothing written
// (records with DryIDPrefix ids pass); the points come back without ids.
func (s *Service) Write(ctx context.Context, org string, points []Point, dryRun bool) ([]Point, error) {
	if len(points) == 0 {
		return nil, apperr.Invalid("points", "must hold at least one point")
	}
	if len(points) > MaxBatch {
		return nil, apperr.Invalid("points", "must have at most %d items", MaxBatch)
	}
	checked := map[string]bool{}
	check := func(typ, id, path string) error {
		if dryRun && strings.HasPrefix(id, DryIDPrefix) {
			return nil // a record the dry run would have created
		}
		k := typ + ":" + id
		if found, done := checked[k]; done {
			if !found {
				return apperr.Invalid(path, "must name a record of your organization; %s is not one", k)
			}
			return nil
		}
		found, err := s.exists(ctx, org, typ, id)
		if err != nil {
			return err
		}
		checked[k] = found
		if !found {
			return apperr.Invalid(path, "must name a record of your organization; %s is not one", k)
		}
		return nil
	}
	now := s.now()
	out := make([]Point, len(points))
	ops := make([]store.Op, 0, len(points))
	for i, p := range points {
		typ, id, _ := s.ParseResource(p.Resource)
		if err := check(typ, id, fmt.Sprintf("points[%d].resource", i)); err != nil {
			return nil, err
		}
		if p.DealID != nil {
			if err := check("deals", *p.DealID, fmt.Sprintf("points[%d].dealId", i)); err != nil {
				return nil, err
			}
		}
		p.CapturedOn = now
		if !dryRun {
			p.ID = ids.New("mpt")
			op, err := s.st.CreateOp(store.Item{PK: store.MetricPartition(org, p.Resource, p.Key),
				SK: store.MetricSortKey(p.Date, p.CapturedOn.SortKey(), p.ID), Type: store.TypeMetric, Doc: p})
			if err != nil {
				return nil, err
			}
			ops = append(ops, op)
		}
		out[i] = p
	}
	if dryRun {
		return out, nil
	}
	// Fresh ids never collide; a failed condition would be a retried
	// transaction that already succeeded, which the SDK's client token
	// makes DynamoDB answer as done.
	if err := s.st.Transact(ctx, apperr.ConcurrentWrite("the points were written concurrently; try again"), ops...); err != nil {
		return nil, err
	}
	return out, nil
}

// Query is a series read: the body of POST /v1/data/metric-series.
type Query struct {
	Resource    string
	Key         string
	DealContext string // "": no deal context
	Policy      string // one of Policies; "" is PolicyLatest
	Start, End  string // YYYY-MM-DD, both included; "" for open
	Granularity string // one of Granularities; "" is day
	Sources     []string
	// MinConfidence drops points below it, and points without a
	// confidence; nil keeps every point.
	MinConfidence *float64
}

// Read answers a series read for org: the points of the series in the
// period, filtered (sources, minConfidence), with the deal context applied,
// bucketed by the granularity (each bucket answers at its last date that
// has candidates) and picked by the policy, in date order (within a date,
// newest capture first). The resource must be a record of org: otherwise
// a 400 naming resource, as for every record a body names (the spec
// answers this route 400 or 401, never 404). It returns the DynamoDB calls
// the read of the points made.
func (s *Service) Read(ctx context.Context, org string, q Query) (Series, int, error) {
	typ, id, ok := s.ParseResource(q.Resource)
	if !ok {
		return Series{}, 0, apperr.Invalid("resource", "must be formatted %s", s.format)
	}
	found, err := s.exists(ctx, org, typ, id)
	if err != nil {
		return Series{}, 0, err
	}
	if !found {
		return Series{}, 0, apperr.Invalid("resource", "must name a record of your organization; %s is not one", q.Resource)
	}
	if q.DealContext != "" {
		found, err := s.exists(ctx, org, "deals", q.DealContext)
		if err != nil {
			return Series{}, 0, err
		}
		if !found {
			return Series{}, 0, apperr.Invalid("dealContext", "must be the id of a deal of your organization; %q is not", q.DealContext)
		}
	}

	var (
		out     []SeriesPoint
		bucket  string  // the bucket being read
		date    string  // the latest date of the bucket with candidates
		cands   []Point // the candidates of date
		read    int
		tooMany error
	)
	flush := func() error {
		picked := pick(q, cands)
		if len(out)+len(picked) > MaxPoints {
			return apperr.Invalid("period", "holds more than %d points for this read; narrow the period, use a coarser granularity or another policy", MaxPoints)
		}
		for _, p := range picked {
			out = append(out, view(p))
		}
		return nil
	}
	lo, hi := store.MetricDateRange(q.Start, q.End)
	calls, err := s.st.ReadRange(ctx, store.MetricPartition(org, q.Resource, q.Key), lo, hi, func(doc json.RawMessage) (bool, error) {
		if read++; read > MaxCandidates {
			tooMany = apperr.Invalid("period", "holds more than %d stored points; narrow the period", MaxCandidates)
			return false, nil
		}
		var p Point
		if err := json.Unmarshal(doc, &p); err != nil {
			return false, fmt.Errorf("metrics: undecodable point in %s %s: %w", q.Resource, q.Key, err)
		}
		if !keep(q, p) {
			return true, nil
		}
		b := bucketOf(p.Date, q.Granularity)
		if b != bucket && len(cands) > 0 {
			if err := flush(); err != nil {
				return false, err
			}
			cands = cands[:0]
		}
		bucket = b
		if p.Date != date {
			cands, date = cands[:0], p.Date // a later date of the bucket replaces the earlier one
		}
		cands = append(cands, p)
		return true, nil
	})
	if err == nil {
		err = tooMany
	}
	if err == nil && len(cands) > 0 {
		err = flush()
	}
	if err != nil {
		return Series{}, calls, err
	}
	if out == nil {
		out = []SeriesPoint{}
	}
	return Series{Resource: q.Resource, Key: q.Key, Points: out}, calls, nil
}

// keep applies the read's filters: sources, minConfidence and the deal
// context (points of other deals never count).
func keep(q Query, p Point) bool {
	if len(q.Sources) > 0 && !slices.Contains(q.Sources, p.Source) {
		return false
	}
	if q.MinConfidence != nil && (p.Confidence == nil || *p.Confidence < *q.MinConfidence) {
		return false
	}
	if q.DealContext != "" && p.DealID != nil && *p.DealID != q.DealContext {
		return false
	}
	return true
}

// pick applies the deal context and the policy to the candidates of one
// date (in capture order, oldest first).
func pick(q Query, cands []Point) []Point {
	if q.DealContext != "" {
		var tied []Point
		for _, p := range cands {
			if p.DealID != nil {
				tied = append(tied, p)
			}
		}
		if len(tied) > 0 {
			cands = tied
		}
	}
	switch q.Policy {
	case PolicyAll:
		out := slices.Clone(cands)
		slices.Reverse(out)
		return out
	case PolicyHighestConfidence:
		best := cands[0]
		for _, p := range cands[1:] {
			if conf(p) >= conf(best) { // later candidates are newer: ties go to the newest
				best = p
			}
		}
		return []Point{best}
	default:
		return []Point{cands[len(cands)-1]}
	}
}

// conf is a point's confidence; a point without one ranks below 0.
func conf(p Point) float64 {
	if p.Confidence == nil {
		return -1
	}
	return *p.Confidence
}

func view(p Point) SeriesPoint {
	return SeriesPoint{Date: p.Date, Value: p.Value, Unit: p.Unit, Currency: p.Currency, Source: p.Source,
		Confidence: p.Confidence, CapturedOn: p.CapturedOn, DealID: p.DealID}
}

// bucketOf names the bucket of a date (YYYY-MM-DD) at a granularity.
// Weeks are ISO weeks, Monday to Sunday.
func bucketOf(date, granularity string) string {
	switch granularity {
	case "year":
		return date[:4]
	case "quarter":
		return fmt.Sprintf("%sQ%d", date[:4], (atoi2(date[5:7])-1)/3+1)
	case "month":
		return date[:7]
	case "week":
		t, err := time.Parse(time.DateOnly, date)
		if err != nil {
			return date
		}
		y, w := t.ISOWeek()
		return fmt.Sprintf("%04dW%02d", y, w)
	default:
		return date
	}
}

func atoi2(s string) int { return int(s[0]-'0')*10 + int(s[1]-'0') }
