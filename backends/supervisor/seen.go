package supervisor

import "github.com/rangekeeper/rangekeeper/backends"

// Versioned is the part of a Supervisor a periodic consumer reads fleets through.
type Versioned interface {
	Version(backend string) uint64
	FleetOf(backend string) ([]backends.Sandbox, uint64)
}

// Seen remembers, per backend, the fleet version a periodic consumer (the containment watch,
// the timeline's posture check) last read, so an unchanged fleet is neither copied nor walked.
type Seen map[string]uint64

// Changed returns the backend's fleet and records its version, unless the version is the one
// last recorded (ok false: nothing changed since).
func (s Seen) Changed(src Versioned, backend string) (fleet []backends.Sandbox, ok bool) {
	if v, seen := s[backend]; seen && v == src.Version(backend) {
		return nil, false
	}
	fleet, v := src.FleetOf(backend)
	s[backend] = v
	return fleet, true
}
