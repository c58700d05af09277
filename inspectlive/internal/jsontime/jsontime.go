// Package jsontime reads the timestamps Inspect writes (Python isoformat, with or without a
// zone) without ever failing a whole record over one odd time.
package jsontime

import (
	"bytes"
	"encoding/json"
	"time"
)

// Time unmarshals any of Python's isoformat shapes; anything else (or null) is the zero time.
type Time struct{ time.Time }

var layouts = []string{
	time.RFC3339Nano,
	"2006-01-02T15:04:05.999999999",       // naive: taken as UTC
	"2006-01-02 15:04:05.999999999Z07:00", // str(datetime)
	"2006-01-02 15:04:05.999999999",
}

// UnmarshalJSON implements json.Unmarshaler; it never returns an error.
func (t *Time) UnmarshalJSON(b []byte) error {
	t.Time = time.Time{}
	if bytes.Equal(b, []byte("null")) {
		return nil
	}
	var s string
	if json.Unmarshal(b, &s) != nil {
		var secs float64
		if json.Unmarshal(b, &secs) == nil && secs > 0 {
			t.Time = time.Unix(0, int64(secs*1e9)).UTC()
		}
		return nil
	}
	for _, l := range layouts {
		if v, err := time.Parse(l, s); err == nil {
			t.Time = v
			return nil
		}
	}
	return nil
}
