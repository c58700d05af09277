// Package theme holds rangekeeper's semantic styles in 256- and 16-colour variants for dark and
// light backgrounds, plus a colourless variant for NO_COLOR. No icon fonts: every glyph is ASCII
// or basic box drawing.
package theme

import (
	"image/color"

	"charm.land/lipgloss/v2"

	"github.com/rangekeeper/rangekeeper/spec/catalog"
)

// Theme is the set of styles every view draws with.
type Theme struct {
	Name      string
	Title     lipgloss.Style
	Header    lipgloss.Style // table header
	Row       lipgloss.Style
	Selected  lipgloss.Style // cursor row
	Marked    lipgloss.Style // multi-selected rows
	Stale     lipgloss.Style // rows of an unreachable backend
	Dim       lipgloss.Style
	Key       lipgloss.Style
	KeyDanger lipgloss.Style
	Disabled  lipgloss.Style
	OK        lipgloss.Style
	Warn      lipgloss.Style
	Err       lipgloss.Style
	Banner    lipgloss.Style // read-only / simulated indicators
	Border    lipgloss.Style
	sev       map[catalog.Severity]lipgloss.Style
}

// Severity styles a severity label.
func (t Theme) Severity(s catalog.Severity) lipgloss.Style {
	if st, ok := t.sev[s]; ok {
		return st
	}
	return t.Dim
}

type palette struct {
	fg, dim, accent, sel, selFg, ok, warn, err, crit, banner, bannerFg, border color.Color
}

func build(name string, p palette) Theme {
	s := lipgloss.NewStyle
	return Theme{
		Name:      name,
		Title:     s().Bold(true).Foreground(p.accent),
		Header:    s().Bold(true).Foreground(p.fg),
		Row:       s().Foreground(p.fg),
		Selected:  s().Background(p.sel).Foreground(p.selFg).Bold(true),
		Marked:    s().Foreground(p.accent).Bold(true),
		Stale:     s().Foreground(p.dim).Faint(true),
		Dim:       s().Foreground(p.dim),
		Key:       s().Foreground(p.accent).Bold(true),
		KeyDanger: s().Foreground(p.err).Bold(true),
		Disabled:  s().Foreground(p.dim).Strikethrough(false),
		OK:        s().Foreground(p.ok),
		Warn:      s().Foreground(p.warn),
		Err:       s().Foreground(p.err).Bold(true),
		Banner:    s().Background(p.banner).Foreground(p.bannerFg).Bold(true),
		Border:    s().Foreground(p.border),
		sev: map[catalog.Severity]lipgloss.Style{
			catalog.SeverityCritical: s().Foreground(p.crit).Bold(true),
			catalog.SeverityHigh:     s().Foreground(p.err),
			catalog.SeverityMedium:   s().Foreground(p.warn),
			catalog.SeverityLow:      s().Foreground(p.fg),
			catalog.SeverityInfo:     s().Foreground(p.dim),
		},
	}
}

var c = lipgloss.Color

// Dark256 suits dark terminals with 256 colours.
func Dark256() Theme {
	return build("dark256", palette{fg: c("252"), dim: c("244"), accent: c("75"), sel: c("24"), selFg: c("231"),
		ok: c("114"), warn: c("221"), err: c("203"), crit: c("199"), banner: c("130"), bannerFg: c("231"), border: c("240")})
}

// Light256 suits light terminals with 256 colours.
func Light256() Theme {
	return build("light256", palette{fg: c("235"), dim: c("242"), accent: c("25"), sel: c("153"), selFg: c("16"),
		ok: c("28"), warn: c("130"), err: c("160"), crit: c("125"), banner: c("214"), bannerFg: c("16"), border: c("248")})
}

// Dark16 uses only the 16 ANSI colours, which every SSH client and tmux renders.
func Dark16() Theme {
	return build("dark16", palette{fg: c("7"), dim: c("8"), accent: c("12"), sel: c("4"), selFg: c("15"),
		ok: c("10"), warn: c("11"), err: c("9"), crit: c("13"), banner: c("3"), bannerFg: c("0"), border: c("8")})
}

// Light16 uses the 16 ANSI colours on a light background.
func Light16() Theme {
	return build("light16", palette{fg: c("0"), dim: c("8"), accent: c("4"), sel: c("6"), selFg: c("0"),
		ok: c("2"), warn: c("3"), err: c("1"), crit: c("5"), banner: c("3"), bannerFg: c("0"), border: c("8")})
}

// Plain has no colours: only bold and reverse video, for NO_COLOR and dumb terminals.
func Plain() Theme {
	s := lipgloss.NewStyle
	t := Theme{Name: "none", Title: s().Bold(true), Header: s().Bold(true), Row: s(), Selected: s().Reverse(true),
		Marked: s().Bold(true), Stale: s(), Dim: s(), Key: s().Bold(true), KeyDanger: s().Bold(true), Disabled: s(),
		OK: s(), Warn: s(), Err: s().Bold(true), Banner: s().Reverse(true), Border: s()}
	t.sev = map[catalog.Severity]lipgloss.Style{catalog.SeverityCritical: s().Bold(true), catalog.SeverityHigh: s().Bold(true)}
	return t
}

// Pick returns the theme for a config value ("auto", "dark", "light", "dark16", "light16",
// "none"), whether the background is dark, and whether NO_COLOR is set.
func Pick(name string, dark, noColor bool) Theme {
	if noColor || name == "none" {
		return Plain()
	}
	switch name {
	case "dark", "dark256":
		return Dark256()
	case "light", "light256":
		return Light256()
	case "dark16":
		return Dark16()
	case "light16":
		return Light16()
	}
	if dark {
		return Dark256()
	}
	return Light256()
}
