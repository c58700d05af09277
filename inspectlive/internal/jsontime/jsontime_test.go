package jsontime

import (
	"encoding/json"
	"testing"
	"time"
)

func TestUnmarshal(t *testing.T) {
	want := time.Date(2026, 8, 22, 10, 0, 0, 123456000, time.UTC)
	tests := map[string]time.Time{
		`"2026-08-22T10:00:00.123456+00:00"`: want,
		`"2026-08-22T11:00:00.123456+01:00"`: want,
		`"2026-08-22T10:00:00.123456Z"`:      want,
		`"2026-08-22T10:00:00.123456"`:       want,
		`"2026-08-22 10:00:00.123456+00:00"`: want,
		`1787392800.123456`:                  time.Unix(1787392800, 123456000),
		`null`:                               {},
		`"yesterday"`:                        {},
		`{"a":1}`:                            {},
	}
	for in, w := range tests {
		var got struct{ T Time }
		if err := json.Unmarshal([]byte(`{"T":`+in+`}`), &got); err != nil {
			t.Errorf("%s: %v", in, err)
			continue
		}
		if d := got.T.Sub(w); d > time.Microsecond || d < -time.Microsecond || got.T.IsZero() != w.IsZero() {
			t.Errorf("%s: got %v, want %v", in, got.T.Time, w)
		}
	}
}
