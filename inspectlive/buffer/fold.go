package buffer

import (
	"bytes"
	"encoding/json"
	"sort"
	"strconv"
	"strings"

	"github.com/rangekeeper/rangekeeper/inspectlive/internal/jsontime"
)

// The event JSON as Inspect writes it (src/inspect_ai/event/*.py): only the fields the fold uses.
type rawEvent struct {
	Event     string          `json:"event"`
	Timestamp jsontime.Time   `json:"timestamp"`
	Pending   bool            `json:"pending"`
	Action    string          `json:"action"` // sandbox
	Cmd       string          `json:"cmd"`    // sandbox
	Result    json.RawMessage `json:"result"` // sandbox: exit code; tool: result
	Output    json.RawMessage `json:"output"` // sandbox: text; model: ModelOutput
	File      string          `json:"file"`   // sandbox read_file/write_file
	Reason    string          `json:"reason"` // sandbox: why the result (e.g. "policy")
	Function  string          `json:"function"`
	Arguments map[string]any  `json:"arguments"`
	Error     json.RawMessage `json:"error"`   // tool/error: object; model: string
	Type      string          `json:"type"`    // sample_limit
	Message   json.RawMessage `json:"message"` // sample_limit: string; logger: LoggingMessage
	Limit     json.RawMessage `json:"limit"`
	Score     *struct {
		Value json.RawMessage `json:"value"`
	} `json:"score"`
	Intermediate bool `json:"intermediate"`
}

type modelOutput struct {
	Usage *struct {
		TotalTokens int64 `json:"total_tokens"`
	} `json:"usage"`
}

type loggingMessage struct {
	Level   string `json:"level"`
	Message string `json:"message"`
}

// fold is one sample's mutable state inside the reader.
type fold struct {
	st      SampleState
	pending map[string]Command // event_id → in-flight tool call
	counted map[string]bool    // model event_ids whose tokens are summed
	outputs map[int64]string   // Seq → output of a kept command
	summary []byte             // the samples row last folded, to skip an unchanged one
	dirty   bool               // changed since the last published copy
	copy    SampleState        // the last published copy, shared while the sample is unchanged
}

func newFold(k Key) *fold {
	return &fold{
		st:      SampleState{ID: k.ID, Epoch: k.Epoch, Status: StatusInit},
		pending: map[string]Command{},
		counted: map[string]bool{},
		outputs: map[int64]string{},
	}
}

// apply folds one events row. Rows for the same event_id supersede each other (a pending event
// is re-inserted with its id when it completes), so state keyed by event_id is replaced.
func (f *fold) apply(row int64, eventID string, data []byte) {
	f.dirty = true
	var e rawEvent
	if err := json.Unmarshal(data, &e); err != nil {
		return // a row we cannot read says nothing we could show
	}
	if e.Timestamp.Time.After(f.st.LastEvent) {
		f.st.LastEvent = e.Timestamp.Time
	}
	switch e.Event {
	case "sample_init":
		// The first event of every attempt: one seen after progress is a retry (Inspect deletes
		// the failed attempt's rows and starts the sample over), so the old attempt's state goes.
		if f.st.Status != StatusInit || len(f.st.Commands) > 0 || f.st.Tokens > 0 {
			f.restart()
		}
	case "sandbox":
		c := Command{Seq: row, Time: e.Timestamp.Time, Action: e.Action, Cmd: e.Cmd}
		if c.Cmd == "" && e.File != "" {
			c.Cmd = e.File
		}
		// result is an exit code, or (since SandboxEvent grew reason) a string such as a refusal.
		var code int
		if json.Unmarshal(e.Result, &code) == nil && len(e.Result) > 0 && string(e.Result) != "null" {
			c.Exit = &code
		} else {
			c.Result = textOf(e.Result)
		}
		c.Reason = e.Reason
		f.keepCommand(c, textOf(e.Output))
	case "tool":
		if e.Pending {
			f.pending[eventID] = Command{Seq: row, Time: e.Timestamp.Time, Action: "tool", Cmd: toolCmd(e.Arguments),
				Function: e.Function, Pending: true}
		} else {
			delete(f.pending, eventID)
			if msg := errorMessage(e.Error); msg != "" {
				f.st.Errors = appendBounded(f.st.Errors, e.Function+": "+msg, maxErrors)
			}
		}
		f.refreshPending()
	case "model":
		if e.Pending || f.counted[eventID] {
			return
		}
		if msg := textOf(e.Error); msg != "" {
			f.st.Errors = appendBounded(f.st.Errors, "model: "+msg, maxErrors)
		}
		var out modelOutput
		if json.Unmarshal(e.Output, &out) == nil && out.Usage != nil {
			f.counted[eventID] = true
			f.st.Tokens += out.Usage.TotalTokens
		}
	case "error":
		if msg := errorMessage(e.Error); msg != "" {
			f.st.Errors = appendBounded(f.st.Errors, msg, maxErrors)
		}
	case "sample_limit":
		l := e.Type
		if m := textOf(e.Message); m != "" {
			l += ": " + m
		}
		f.st.Limits = appendBounded(f.st.Limits, l, maxErrors)
		f.st.Limit = e.Type
	case "score":
		if e.Score != nil && (!e.Intermediate || f.st.Score == "") {
			f.st.Score = scoreText(e.Score.Value)
		}
	case "logger":
		var m loggingMessage
		if json.Unmarshal(e.Message, &m) == nil && m.Message != "" {
			f.st.noteLogger(m.Message)
		}
	}
}

// restart forgets a failed attempt, keeping only the sample's identity and its retry count.
func (f *fold) restart() {
	n := newFold(Key{ID: f.st.ID, Epoch: f.st.Epoch})
	n.st.Retries = f.st.Retries + 1
	n.dirty = true
	*f = *n
}

func (f *fold) keepCommand(c Command, output string) {
	if len(output) > maxOutput {
		output = output[len(output)-maxOutput:]
	}
	f.st.Commands = append(f.st.Commands, c)
	f.outputs[c.Seq] = output
	if len(f.st.Commands) > MaxCommands {
		for _, old := range f.st.Commands[:len(f.st.Commands)-MaxCommands] {
			delete(f.outputs, old.Seq)
		}
		f.st.Commands = append(f.st.Commands[:0:0], f.st.Commands[len(f.st.Commands)-MaxCommands:]...)
	}
}

// refreshPending shows the newest in-flight tool call (parallel tool calls are rare; the newest
// is what the agent waits on last).
func (f *fold) refreshPending() {
	f.st.Pending = nil
	for _, c := range f.pending {
		if f.st.Pending == nil || c.Seq > f.st.Pending.Seq {
			c := c
			f.st.Pending = &c
		}
	}
}

// toolCmd is what a tool call asks to run: bash()'s cmd or python()'s code.
func toolCmd(args map[string]any) string {
	for _, k := range []string{"cmd", "code", "command"} {
		if s, ok := args[k].(string); ok {
			return s
		}
	}
	return ""
}

func textOf(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return ""
}

// errorMessage reads both shapes Inspect uses: {"message": …} objects and plain strings.
func errorMessage(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var obj struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(raw, &obj) == nil && obj.Message != "" {
		return obj.Message
	}
	return textOf(raw)
}

// scoreText renders a score value (a string, number, bool, list or dict) compactly.
func scoreText(raw json.RawMessage) string {
	if s := textOf(raw); s != "" {
		return s
	}
	var f float64
	if json.Unmarshal(raw, &f) == nil {
		return strconv.FormatFloat(f, 'g', 4, 64)
	}
	return strings.TrimSpace(string(raw))
}

// summary is EvalSampleSummary (src/inspect_ai/log/_log.py), the samples.data JSON.
type summary struct {
	UUID       string          `json:"uuid"`
	Completed  bool            `json:"completed"`
	StartedAt  jsontime.Time   `json:"started_at"`
	TotalTime  *float64        `json:"total_time"`
	Error      json.RawMessage `json:"error"`
	Limit      json.RawMessage `json:"limit"`
	Retries    int             `json:"retries"`
	ModelUsage map[string]struct {
		TotalTokens int64 `json:"total_tokens"`
	} `json:"model_usage"`
	Scores map[string]struct {
		Value json.RawMessage `json:"value"`
	} `json:"scores"`
}

// applySummary folds the samples row.
func (f *fold) applySummary(data []byte) {
	if bytes.Equal(data, f.summary) && f.st.Status != StatusFlushed {
		return
	}
	f.summary, f.dirty = data, true
	var s summary
	if err := json.Unmarshal(data, &s); err != nil {
		return
	}
	st := &f.st
	st.UUID = s.UUID
	st.Retries = max(st.Retries, s.Retries) // the summary's count, or the restarts seen here
	if !s.StartedAt.IsZero() {
		st.StartedAt = s.StartedAt.Time
	}
	if s.TotalTime != nil {
		st.TotalTime = *s.TotalTime
	}
	var usage int64
	for _, u := range s.ModelUsage {
		usage += u.TotalTokens
	}
	st.Usage = usage
	if e := errorMessage(s.Error); e != "" {
		st.Error = e
	}
	if l := limitText(s.Limit); l != "" {
		st.Limit = l
	}
	for _, name := range sortedKeys(s.Scores) {
		st.Score = scoreText(s.Scores[name].Value)
		break
	}
	switch {
	case s.Completed && st.Error != "":
		st.Status = StatusErrored
	case s.Completed:
		st.Status = StatusCompleted
	default:
		st.Status = StatusRunning
	}
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// limitText reads the summary's limit: a string in summaries, {type, limit} in full samples.
func limitText(raw json.RawMessage) string {
	if s := textOf(raw); s != "" {
		return s
	}
	var obj struct {
		Type string `json:"type"`
	}
	if json.Unmarshal(raw, &obj) == nil {
		return obj.Type
	}
	return ""
}
