package clock

import (
	"encoding/json"
	"testing"
	"time"
)

func TestTimesEncodeAsUTCWithExactlyThreeFractionalDigits(t *testing.T) {
	cases := map[time.Time]string{
		time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC):                       `"2026-01-02T03:04:05.000Z"`,
		time.Date(2026, 1, 2, 3, 4, 5, 120_000_000, time.UTC):             `"2026-01-02T03:04:05.120Z"`,
		time.Date(2026, 1, 2, 3, 4, 5, 123_456_789, time.UTC):             `"2026-01-02T03:04:05.123Z"`,
		time.Date(2026, 1, 2, 5, 4, 5, 0, time.FixedZone("CEST", 2*3600)): `"2026-01-02T03:04:05.000Z"`,
	}
	for in, want := range cases {
		b, err := json.Marshal(Of(in))
		if err != nil || string(b) != want {
			t.Errorf("%v encodes as %s (%v), want %s", in, b, err, want)
		}
		var back Time
		if err := json.Unmarshal(b, &back); err != nil || !back.Equal(Of(in).Time) {
			t.Errorf("%s decodes as %v (%v)", b, back, err)
		}
	}
}

func TestOlderStoredTimesOfAnyPrecisionDecode(t *testing.T) {
	for _, s := range []string{`"2026-01-02T03:04:05Z"`, `"2026-01-02T03:04:05.12Z"`, `"2026-01-02T03:04:05.123456789Z"`, `"2026-01-02T05:04:05.5+02:00"`} {
		var v Time
		if err := json.Unmarshal([]byte(s), &v); err != nil {
			t.Errorf("%s: %v", s, err)
		}
	}
	var v Time
	if err := json.Unmarshal([]byte(`"yesterday"`), &v); err == nil {
		t.Error("a non-RFC 3339 time decoded")
	}
}
