package verify

import (
	"fmt"
	"strings"
)

// Axes of the AISI profile in the order they are written (T.H.N).
var Axes = []string{"T", "H", "N"}

// levels lists each axis's levels from weakest to strongest: T0 unrestricted execution … T2 no
// execution; H0 no isolation … H3 remote VM; N0 full internet … N2 no external network.
var levels = map[string][]string{
	"T": {"T0", "T1", "T2"},
	"H": {"H0", "H1", "H2", "H3"},
	"N": {"N0", "N1", "N2"},
}

// Profile is a T.H.N profile; an empty axis is unspecified (expected) or unknown (measured).
type Profile struct {
	T string `json:"T,omitempty"`
	H string `json:"H,omitempty"`
	N string `json:"N,omitempty"`
}

// Get returns the level of axis ("T", "H" or "N").
func (p Profile) Get(axis string) string {
	switch axis {
	case "T":
		return p.T
	case "H":
		return p.H
	}
	return p.N
}

func (p *Profile) set(axis, level string) {
	switch axis {
	case "T":
		p.T = level
	case "H":
		p.H = level
	default:
		p.N = level
	}
}

// String renders the profile as T0.H1.N2, with "?" for an unknown axis and "*" for one that
// is not specified.
func (p Profile) String() string {
	parts := make([]string, 0, 3)
	for _, a := range Axes {
		v := p.Get(a)
		if v == "" {
			v = a + "*"
		}
		parts = append(parts, v)
	}
	return strings.Join(parts, ".")
}

// ParseProfile accepts a full profile (T0.H1.N2), any subset of its axes in order (H1.N2, N2),
// and the leading-dots shorthand (...N2, T0..N2); axes left out are not checked.
func ParseProfile(s string) (Profile, error) {
	var p Profile
	in := strings.TrimSpace(s)
	if in == "" {
		return p, fmt.Errorf("empty profile (want e.g. T0.H1.N2)")
	}
	seen := map[string]bool{}
	for _, part := range strings.Split(strings.ToUpper(in), ".") {
		if part == "" {
			continue
		}
		if len(part) != 2 {
			return Profile{}, fmt.Errorf("profile %q: %q is not an axis level (want T0-T2, H0-H3, N0-N2)", s, part)
		}
		axis := part[:1]
		if !contains(levels[axis], part) {
			return Profile{}, fmt.Errorf("profile %q: %q is not an axis level (want T0-T2, H0-H3, N0-N2)", s, part)
		}
		if seen[axis] {
			return Profile{}, fmt.Errorf("profile %q names axis %s twice", s, axis)
		}
		seen[axis] = true
		p.set(axis, part)
	}
	if !seen["T"] && !seen["H"] && !seen["N"] {
		return Profile{}, fmt.Errorf("profile %q names no axis (want e.g. T0.H1.N2)", s)
	}
	return p, nil
}

// strength is a level's position from weakest (0); -1 for unknown.
func strength(level string) int {
	if level == "" {
		return -1
	}
	for i, l := range levels[level[:1]] {
		if l == level {
			return i
		}
	}
	return -1
}

// Weaker reports whether measured is weaker than expected on one axis; both must be known.
func Weaker(measured, expected string) bool {
	m, e := strength(measured), strength(expected)
	return m >= 0 && e >= 0 && m < e
}

func contains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}
