package sandbox

import "time"

// AgeChanges is the first moment after now at which Age(·, t) shows a different text: the next
// second for ages under a minute, the next minute under an hour, the next hour under two days,
// the next day after that. The zero time (no creation time) never changes.
func AgeChanges(now, t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	d := now.Sub(t)
	var unit time.Duration
	switch {
	case d < 0:
		return t.Add(time.Second) // "0s" until a full second has passed
	case d < time.Minute:
		unit = time.Second
	case d < time.Hour:
		unit = time.Minute
	case d < 48*time.Hour:
		unit = time.Hour
	default:
		unit = 24 * time.Hour
	}
	return t.Add((d/unit + 1) * unit)
}
