// Package clock is the service's one notion of time: the current instant
// at the precision the API shows (milliseconds, UTC), and Time, which every
// record uses for its timestamps so that each one reads as RFC 3339 UTC
// with exactly three fractional digits ("2026-11-22T04:31:50.120Z").
package clock

import (
	"encoding/json"
	"fmt"
	"time"
)

// Layout is the one timestamp format of the API.
const Layout = "2006-01-02T15:04:05.000Z"

// Time is an instant that encodes in Layout. It decodes any RFC 3339 time,
// so records stored before the format was fixed read back.
type Time struct{ time.Time }

// Now returns the current instant, in UTC, truncated to milliseconds.
func Now() Time { return Of(time.Now()) }

// Of returns t in UTC truncated to milliseconds.
func Of(t time.Time) Time { return Time{t.UTC().Truncate(time.Millisecond)} }

// Ptr returns a pointer to a copy of t, for optional timestamps.
func (t Time) Ptr() *Time { return &t }

// String formats t in Layout.
func (t Time) String() string { return t.UTC().Format(Layout) }

// MarshalJSON writes t in Layout.
func (t Time) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, len(Layout)+2)
	b = append(b, '"')
	b = t.UTC().AppendFormat(b, Layout)
	return append(b, '"'), nil
}

// UnmarshalJSON reads an RFC 3339 time (any fractional precision).
func (t *Time) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("timestamp must be a string: %w", err)
	}
	p, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return fmt.Errorf("timestamp %q is not RFC 3339: %w", s, err)
	}
	*t = Of(p)
	return nil
}

// SortKey formats t so that string order is time order (for sort indexes).
func (t Time) SortKey() string { return t.UTC().Format(Layout) }
