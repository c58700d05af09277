package author

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/rangekeeper/rangekeeper/spec"
	"github.com/rangekeeper/rangekeeper/views/keymap"
	"github.com/rangekeeper/rangekeeper/views/screen"
)

// View renders the screen.
func (m *Model) View() tea.View {
	v := tea.NewView(m.render())
	v.AltScreen = !m.opts.Embedded
	return v
}

func (m *Model) header() string {
	what := "new " + string(m.format()) + " spec"
	if m.file != nil {
		what = m.file.path + " [" + string(m.file.format) + "]"
	}
	prof := "profile …"
	if m.linted && m.lintErr == nil {
		prof = fmt.Sprintf("profile %s  %d warning(s)", m.result.Profile, len(m.result.Findings))
	}
	return m.th.Title.Render("rangekeeper author") + "  " + what + "  " + prof
}

func (m *Model) render() string {
	var b strings.Builder
	b.WriteString(m.header() + "\n")
	if m.mode == modeFile && m.file != nil {
		m.renderFile(&b)
	} else {
		var form strings.Builder
		m.renderForm(&form)
		b.WriteString(m.withPreview(form.String()))
	}
	b.WriteString("\n" + m.th.Dim.Render("Inspect: ") + m.draftSnippet() + "\n")
	switch m.mode {
	case modeSavePrompt:
		b.WriteString("save as: " + m.buf.View(m.th) + "\n")
	case modeConfirmOverwrite:
		b.WriteString(m.th.Warn.Render("overwrite "+m.savePath+"? ("+m.keys.Labels(keymap.Yes, keymap.No)+")") + "\n")
	}
	km := m.keys
	hint := func(n keymap.Name, help string) string {
		if l := km.Label(n); l != "" {
			return l + " " + help
		}
		return ""
	}
	keys := screen.Hints(km.Labels(keymap.Down, keymap.Up)+" move", km.Labels(keymap.Select, keymap.Open)+" change", hint(keymap.Fix, "fix"),
		hint(keymap.NextWarning, "next warning"), hint(keymap.Save, "save"), hint(keymap.Quit, "quit"))
	if m.mode == modeFile {
		keys = screen.Hints(km.Labels(keymap.Down, keymap.Up)+" finding", hint(keymap.Fix, "fix (keeps comments)"), hint(keymap.Save, "save"), hint(keymap.Quit, "quit"))
	}
	if m.opts.Verify != nil {
		keys = screen.Hints(keys, hint(keymap.Verify, "verify"))
	}
	b.WriteString(m.th.Dim.Render(keys) + "\n")
	if l := m.verifyLine(); l != "" {
		b.WriteString(l + "\n")
	}
	if m.status != "" {
		b.WriteString(m.status + "\n")
	}
	return b.String()
}

func (m *Model) draftSnippet() string {
	if m.file != nil {
		switch m.file.format {
		case spec.FormatHelm:
			return fmt.Sprintf(`SandboxEnvironmentSpec(type="k8s", config=K8sSandboxEnvironmentConfig(values=Path(%q)))`, m.file.path)
		case spec.FormatProxmox, spec.FormatQM, spec.FormatPVEFirewall:
			return `SandboxEnvironmentSpec(type="proxmox", config=ProxmoxSandboxEnvironmentConfig(...))`
		}
		return fmt.Sprintf(`SandboxEnvironmentSpec(type="docker", config=%q)`, m.file.path)
	}
	return m.draft.Snippet(m.draft.DefaultFile())
}

func (m *Model) warningText(f spec.Finding) string {
	sev := m.th.Severity(f.Severity).Render(strings.ToUpper(f.Severity.String()))
	s := "! " + sev + " " + f.RuleID + " " + f.Message
	fixable := canFix(f)
	if m.mode == modeFile || m.file != nil {
		_, fixable = composeNodeFixes[f.RuleID]
		fixable = fixable && m.file != nil && m.file.format == spec.FormatCompose
	}
	if fixable {
		s += "  [f] " + f.Fix
	}
	return s
}

func (m *Model) renderForm(b *strings.Builder) {
	byField := map[string][]spec.Finding{}
	var general []spec.Finding
	for _, f := range m.result.Findings {
		if k := fieldOf(f); k != "" {
			byField[k] = append(byField[k], f)
		} else {
			general = append(general, f)
		}
	}
	section := ""
	for i, f := range m.visible() {
		if f.section != section {
			section = f.section
			b.WriteString(m.th.Header.Render(section) + "\n")
		}
		cur := "  "
		if i == m.cursor {
			cur = "> "
		}
		val := m.draft[f.key]
		if i == m.cursor && m.edit {
			val = m.buf.View(m.th)
		}
		if val == "" {
			val = "-"
		}
		line := fmt.Sprintf("%s%-22s %s", cur, f.label, truncate(val, 40))
		if i == m.cursor {
			line = m.th.Selected.Render(line)
		}
		b.WriteString(line + "\n")
		for _, w := range byField[f.key] {
			b.WriteString("      " + m.warningText(w) + "\n")
		}
	}
	switch {
	case m.lintErr != nil:
		b.WriteString(m.th.Err.Render("spec error: "+m.lintErr.Error()) + "\n")
	case len(general) > 0:
		b.WriteString(m.th.Header.Render("Whole spec") + "\n")
		for _, w := range general {
			b.WriteString("      " + m.warningText(w) + "\n")
		}
	case m.linted && len(m.result.Findings) == 0:
		b.WriteString(m.th.OK.Render("no warnings") + "\n")
	}
}

func (m *Model) renderFile(b *strings.Builder) {
	lines := strings.Split(string(m.file.data), "\n")
	byLine := map[int][]int{}
	for i, f := range m.result.Findings {
		byLine[f.Line] = append(byLine[f.Line], i)
	}
	budget := m.height - 8
	if budget < 10 {
		budget = 10
	}
	for n, l := range lines {
		if budget <= 0 {
			b.WriteString(m.th.Dim.Render("…") + "\n")
			break
		}
		b.WriteString(m.th.Dim.Render(fmt.Sprintf("%4d ", n+1)) + l + "\n")
		budget--
		for _, i := range byLine[n+1] {
			cur := "     "
			if i == m.cursor {
				cur = "   > "
			}
			b.WriteString(cur + m.warningText(m.result.Findings[i]) + "\n")
			budget--
		}
	}
	if m.lintErr != nil {
		b.WriteString(m.th.Err.Render("spec error: "+m.lintErr.Error()) + "\n")
	} else if m.linted && len(m.result.Findings) == 0 {
		b.WriteString(m.th.OK.Render("no warnings") + "\n")
	}
}

// withPreview puts the generated file beside the form on wide terminals and below it otherwise,
// cut to the lines that fit.
func (m *Model) withPreview(form string) string {
	width, height := m.width, m.height
	if width <= 0 {
		width = 100
	}
	if height <= 0 {
		height = 40
	}
	formLines := strings.Split(strings.TrimRight(form, "\n"), "\n")
	preview := strings.Split(strings.TrimRight(m.draft.Render(), "\n"), "\n")
	if width >= 150 {
		left := width * 3 / 5
		var b strings.Builder
		rows := max(len(formLines), min(len(preview)+1, height-6))
		for i := 0; i < rows; i++ {
			l := ""
			if i < len(formLines) {
				l = ansi.Truncate(formLines[i], left-1, "…")
			}
			r := ""
			switch {
			case i == 0:
				r = m.th.Header.Render(m.draft.DefaultFile())
			case i-1 < len(preview):
				r = m.th.Dim.Render(ansi.Truncate(preview[i-1], width-left-3, "…"))
			}
			b.WriteString(l + strings.Repeat(" ", max(left-ansi.StringWidth(l), 1)) + "│ " + r + "\n")
		}
		return b.String()
	}
	var b strings.Builder
	for _, l := range formLines {
		b.WriteString(ansi.Truncate(l, width, "…") + "\n")
	}
	room := height - len(formLines) - 7
	if room >= 4 {
		b.WriteString(m.th.Header.Render(m.draft.DefaultFile()) + "\n")
		for i, l := range preview {
			if i >= room-1 {
				b.WriteString(m.th.Dim.Render("  …") + "\n")
				break
			}
			b.WriteString(m.th.Dim.Render("  "+ansi.Truncate(l, width-2, "…")) + "\n")
		}
	}
	return b.String()
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
