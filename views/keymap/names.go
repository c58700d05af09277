package keymap

import "github.com/rangekeeper/rangekeeper/backends"

// Binding names. Code names bindings only through these constants, so a mistyped name does not
// compile; TestEveryNameIsBound checks each constant has a binding in Default and back.
const (
	// navigate
	Up       Name = "up"
	Down     Name = "down"
	Top      Name = "top"
	Bottom   Name = "bottom"
	PageUp   Name = "pageup"
	PageDown Name = "pagedown"
	Open     Name = "open" // open the row, choose, accept the input
	Back     Name = "back" // leave the screen, close the dialog, clear the filter

	// view (the fleet table, the probe report)
	Expand  Name = "expand"
	Filter  Name = "filter"
	Command Name = "command"
	Sort    Name = "sort"
	Reverse Name = "reverse"
	Group   Name = "group"

	// sandbox
	Select   Name = "select"
	Snapshot Name = "snapshot"
	Revert   Name = "revert"
	Teardown Name = "teardown"
	Reset    Name = "reset"
	Probe    Name = "probe"
	Copy     Name = "copy"

	// app
	Author  Name = "author"
	Journal Name = "journal"
	Tasks   Name = "tasks"
	Cancel  Name = "cancel"
	Help    Name = "help"
	Redraw  Name = "redraw"
	Quit    Name = "quit"

	// author
	Fix         Name = "fix"
	NextWarning Name = "next-warning"
	Save        Name = "save"
	Verify      Name = "verify" // stand the spec up on the engine, prove it holds, tear it down

	// dialog
	Focus Name = "focus"
	Yes   Name = "yes"
	No    Name = "no"
)

// Triage bindings: logs, the timeline and the shell, and the log screen's own keys.
const (
	Logs       Name = "logs"
	Timeline   Name = "timeline"
	Shell      Name = "shell"
	LogFollow  Name = "log-follow"
	LogStamps  Name = "log-timestamps"
	LogWrap    Name = "log-wrap"
	LogPause   Name = "log-pause"
	SearchNext Name = "search-next"
	SearchPrev Name = "search-prev"
)

// Containment watch.
const (
	Quarantine Name = "quarantine"
	Release    Name = "release"
	Ack        Name = "ack"
)

// Help groups, in help order.
const (
	GroupNav     = "navigate"
	GroupView    = "view"
	GroupSandbox = "sandbox"
	GroupApp     = "app"
	GroupAuthor  = "author"
	GroupDialog  = "dialog"
)

var groupOrder = []string{GroupNav, GroupView, GroupSandbox, GroupApp, GroupAuthor, GroupDialog}

// Names lists every binding name, in Default's order.
func Names() []Name {
	var out []Name
	for _, b := range Default().list {
		out = append(out, b.Name)
	}
	return out
}

// ActionName is the binding of an action kind's key: the kind's own name, which must be one of
// the constants above (TestEveryKeyedKindIsBound).
func ActionName(a backends.Action) Name { return Name(a) }

// actions are the bindings of the action kinds that declare a key, in declaration order; their
// danger follows the kind's declaration.
func actions() []Binding {
	var out []Binding
	for _, k := range backends.Kinds() {
		if k.Key == "" {
			continue
		}
		out = append(out, Binding{Name: ActionName(k.Kind), Keys: []string{k.Key}, Help: k.Help, Group: GroupSandbox,
			Action: k.Kind, Dangerous: k.Kind.Destructive(), Mutates: k.Kind.Mutating(), Bulk: k.Bulk})
	}
	return out
}

// Default is the stock keymap. Keys avoid tmux's and screen's prefixes (ctrl+b, ctrl+a) and the
// terminal's flow control (ctrl+s, ctrl+q), which Remap refuses.
func Default() *Map {
	bs := []Binding{
		{Name: Up, Keys: []string{"k", "up"}, Help: "up", Group: GroupNav},
		{Name: Down, Keys: []string{"j", "down"}, Help: "down", Group: GroupNav},
		{Name: Top, Keys: []string{"g", "home"}, Help: "top", Group: GroupNav},
		{Name: Bottom, Keys: []string{"G", "end"}, Help: "bottom", Group: GroupNav},
		{Name: PageUp, Keys: []string{"pgup", "ctrl+u"}, Help: "page up", Group: GroupNav},
		{Name: PageDown, Keys: []string{"pgdown", "ctrl+d"}, Help: "page down", Group: GroupNav},
		{Name: Open, Keys: []string{"enter", "l"}, Help: "detail", Group: GroupNav},
		{Name: Back, Keys: []string{"esc", "h"}, Help: "back", Group: GroupNav},
		{Name: Expand, Keys: []string{"e", "right"}, Help: "expand members", Group: GroupView},
		{Name: Filter, Keys: []string{"/"}, Help: "filter", Group: GroupView},
		{Name: Command, Keys: []string{":"}, Help: "command", Group: GroupView},
		{Name: Sort, Keys: []string{"o"}, Help: "sort column", Group: GroupView},
		{Name: Reverse, Keys: []string{"O"}, Help: "reverse sort", Group: GroupView},
		{Name: Group, Keys: []string{"b"}, Help: "group by", Group: GroupView},
		{Name: Select, Keys: []string{"space"}, Help: "select", Group: GroupSandbox},
	}
	bs = append(bs, actions()...) // from the kinds' declarations (backends.Kinds)
	bs = append(bs, []Binding{
		{Name: Copy, Keys: []string{"c"}, Help: "copy ID", Group: GroupSandbox},
		{Name: Author, Keys: []string{"a"}, Help: "author spec", Group: GroupApp},
		{Name: Journal, Keys: []string{"@"}, Help: "journal", Group: GroupApp},
		{Name: Tasks, Keys: []string{"t"}, Help: "tasks", Group: GroupApp},
		{Name: Cancel, Keys: []string{"x"}, Help: "cancel action", Group: GroupApp},
		{Name: Help, Keys: []string{"?"}, Help: "help", Group: GroupApp},
		{Name: Redraw, Keys: []string{"ctrl+l"}, Help: "redraw", Group: GroupApp},
		{Name: Quit, Keys: []string{"q", "ctrl+c"}, Help: "quit", Group: GroupApp},
		{Name: Fix, Keys: []string{"f"}, Help: "fix the warning", Group: GroupAuthor},
		{Name: NextWarning, Keys: []string{"n"}, Help: "next warning", Group: GroupAuthor},
		{Name: Save, Keys: []string{"w"}, Help: "save", Group: GroupAuthor},
		{Name: Verify, Keys: []string{"V"}, Help: "verify on the engine", Group: GroupAuthor},
		{Name: Focus, Keys: []string{"tab", "shift+tab"}, Help: "next field / button", Group: GroupDialog},
		{Name: Yes, Keys: []string{"y"}, Help: "yes", Group: GroupDialog},
		{Name: No, Keys: []string{"n"}, Help: "no", Group: GroupDialog},
		// triage: m is lazydocker's logs key (E, its exec shell, is the shell kind's); H for history
		{Name: Logs, Keys: []string{"m"}, Help: "logs", Group: GroupApp},
		{Name: Timeline, Keys: []string{"H"}, Help: "timeline", Group: GroupApp},
		{Name: LogFollow, Keys: []string{"f"}, Help: "follow", Group: GroupView},
		{Name: LogStamps, Keys: []string{"T"}, Help: "timestamps", Group: GroupView},
		{Name: LogWrap, Keys: []string{"w"}, Help: "wrap", Group: GroupView},
		{Name: LogPause, Keys: []string{"p"}, Help: "pause", Group: GroupView},
		{Name: SearchNext, Keys: []string{"n"}, Help: "next match", Group: GroupView},
		{Name: SearchPrev, Keys: []string{"N"}, Help: "previous match", Group: GroupView},

		// Containment watch (quarantine and release are kinds' keys).
		{Name: Ack, Keys: []string{"A"}, Help: "acknowledge alert", Group: GroupApp},
	}...)
	return NewMap(bs)
}
