package series

import (
	"math"
	"time"

	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/jsonbody"
)

// pointFields are the fields of a point a write accepts.
var pointFields = []string{"resource", "key", "date", "value", "unit", "currency", "source", "confidence", "dealId", "periodType"}

// DecodePoints reads the body of a write, {"points": [...]}: errors name
// the point and its field ("points[3].date").
func (s *Service) DecodePoints(body []byte) ([]Point, error) {
	o, err := jsonbody.ParseObject(body, "points")
	if err != nil {
		return nil, err
	}
	list, err := o.Objects("points", MaxBatch, pointFields...)
	if err != nil {
		return nil, err
	}
	if !list.Set || list.Null || len(list.Value) == 0 {
		return nil, apperr.Invalid("points", "is required: an array of 1 to %d points", MaxBatch)
	}
	out := make([]Point, len(list.Value))
	for i, po := range list.Value {
		if out[i], err = s.decodePoint(po); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (s *Service) decodePoint(o *jsonbody.Object) (Point, error) {
	var p Point
	res, err := required(o, "resource", jsonbody.Text{Max: 200})
	if err != nil {
		return p, err
	}
	if _, _, ok := s.ParseResource(res); !ok {
		return p, apperr.Invalid(o.Path("resource"), "must be formatted %s", s.format)
	}
	key, err := required(o, "key", jsonbody.Text{Max: 200})
	if err != nil {
		return p, err
	}
	if !ValidKey(key) {
		return p, apperr.Invalid(o.Path("key"), "must be formatted %s", KeyFormat)
	}
	date, err := required(o, "date", jsonbody.Text{})
	if err != nil {
		return p, err
	}
	if err := checkDate(o.Path("date"), date); err != nil {
		return p, err
	}
	v, err := o.Number("value")
	if err != nil {
		return p, err
	}
	if !v.Set || v.Null {
		return p, apperr.Invalid(o.Path("value"), "is required: a number")
	}
	if f, err := v.Value.Float64(); err != nil || math.IsInf(f, 0) {
		return p, apperr.Invalid(o.Path("value"), "must be a finite number")
	}
	source, err := required(o, "source", jsonbody.Text{Min: 1, Max: 100, Trim: true})
	if err != nil {
		return p, err
	}
	p = Point{Resource: res, Key: key, Date: date, Value: v.Value, Source: source}
	if p.Unit, err = optional(o, "unit", jsonbody.Text{Min: 1, Max: 50, Trim: true}); err != nil {
		return p, err
	}
	if p.Currency, err = optional(o, "currency", jsonbody.Text{}); err != nil {
		return p, err
	}
	if p.Currency != nil && !currencyPattern.MatchString(*p.Currency) {
		return p, apperr.Invalid(o.Path("currency"), "must be an ISO 4217 code of three capital letters, such as USD")
	}
	if p.Confidence, err = confidence(o, "confidence"); err != nil {
		return p, err
	}
	if p.DealID, err = optional(o, "dealId", jsonbody.Text{Min: 1, Max: 100}); err != nil {
		return p, err
	}
	pt, err := o.Enum("periodType", PeriodTypes...)
	if err != nil {
		return p, err
	}
	if pt.Set && !pt.Null {
		p.PeriodType = &pt.Value
	}
	return p, nil
}

// required reads a string field that must be sent.
func required(o *jsonbody.Object, name string, t jsonbody.Text) (string, error) {
	f, err := o.String(name, t)
	if err != nil {
		return "", err
	}
	if !f.Set || f.Null || f.Value == "" {
		return "", apperr.Invalid(o.Path(name), "is required")
	}
	return f.Value, nil
}

// optional reads a string field that may be absent or null.
func optional(o *jsonbody.Object, name string, t jsonbody.Text) (*string, error) {
	f, err := o.String(name, t)
	if err != nil || !f.Set || f.Null {
		return nil, err
	}
	return &f.Value, nil
}

// confidence reads an optional number from 0 to 100.
func confidence(o *jsonbody.Object, name string) (*float64, error) {
	n, err := o.Number(name)
	if err != nil || !n.Set || n.Null {
		return nil, err
	}
	f, err := n.Value.Float64()
	if err != nil || f < 0 || f > 100 {
		return nil, apperr.Invalid(o.Path(name), "must be a number from 0 to 100")
	}
	return &f, nil
}

// checkDate checks a YYYY-MM-DD calendar date.
func checkDate(path, s string) error {
	if _, err := time.Parse(time.DateOnly, s); err != nil || len(s) != 10 {
		return apperr.Invalid(path, "must be a date formatted YYYY-MM-DD, such as 2025-03-31")
	}
	return nil
}

// DecodeQuery reads the body of a series read: {resource, key,
// dealContext?, policy?, period?: {start?, end?, granularity?, sources?,
// minConfidence?}}.
func (s *Service) DecodeQuery(body []byte) (Query, error) {
	var q Query
	o, err := jsonbody.ParseObject(body, "resource", "key", "dealContext", "policy", "period")
	if err != nil {
		return q, err
	}
	if q.Resource, err = required(o, "resource", jsonbody.Text{Max: 200}); err != nil {
		return q, apperr.Invalid("resource", "is required: a string formatted %s", s.format)
	}
	if _, _, ok := s.ParseResource(q.Resource); !ok {
		return q, apperr.Invalid("resource", "must be formatted %s", s.format)
	}
	if q.Key, err = required(o, "key", jsonbody.Text{Max: 200}); err != nil {
		return q, apperr.Invalid("key", "is required: a string formatted %s", KeyFormat)
	}
	if !ValidKey(q.Key) {
		return q, apperr.Invalid("key", "must be formatted %s", KeyFormat)
	}
	deal, err := optional(o, "dealContext", jsonbody.Text{Min: 1, Max: 100})
	if err != nil {
		return q, err
	}
	if deal != nil {
		q.DealContext = *deal
	}
	policy, err := o.Enum("policy", Policies...)
	if err != nil {
		return q, err
	}
	q.Policy = PolicyLatest
	if policy.Set && !policy.Null {
		q.Policy = policy.Value
	}
	q.Granularity = "day"
	period, err := o.Object("period", "start", "end", "granularity", "sources", "minConfidence")
	if err != nil || !period.Set || period.Null {
		return q, err
	}
	p := period.Value
	for _, end := range []struct {
		name string
		to   *string
	}{{"start", &q.Start}, {"end", &q.End}} {
		s, err := optional(p, end.name, jsonbody.Text{})
		if err != nil {
			return q, err
		}
		if s != nil {
			if err := checkDate(p.Path(end.name), *s); err != nil {
				return q, err
			}
			*end.to = *s
		}
	}
	if q.Start != "" && q.End != "" && q.End < q.Start {
		return q, apperr.Invalid(p.Path("end"), "must not be before period.start (%s)", q.Start)
	}
	g, err := p.Enum("granularity", Granularities...)
	if err != nil {
		return q, err
	}
	if g.Set && !g.Null {
		q.Granularity = g.Value
	}
	sources, err := p.Strings("sources", jsonbody.Text{Min: 1, Max: 100}, 50)
	if err != nil {
		return q, err
	}
	q.Sources = sources.Value
	if q.MinConfidence, err = confidence(p, "minConfidence"); err != nil {
		return q, err
	}
	return q, nil
}
