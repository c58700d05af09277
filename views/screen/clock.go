package screen

import "time"

// Clock is a screen whose view changes with time only at moments it can name (ages that
// roll over once a minute, a retry countdown). The program wakes for the earliest such moment
// of the screens on the stack instead of every second; a screen that is not a Clock gets a Tick
// every second.
type Clock interface {
	// NextChange is the first moment after now at which the screen's view would differ from
	// its view at now with nothing else changed; the zero time means never.
	NextChange(now time.Time) time.Time
}
