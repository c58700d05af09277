package state

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/rangekeeper/rangekeeper/internal/redact"

	"github.com/rangekeeper/rangekeeper/sandbox"
)

// The inventory cache is written in a compact binary form rather than JSON: a fleet of 10,000
// Kubernetes sandboxes is ~100 MB of JSON (each posture finding repeats its rule, message and
// evidence) that took over a second to decode before the first frame. Here every distinct string
// is stored once in a table and referenced by number, so the record is a few MB, decoding makes
// each distinct string once (rows share them), and members, findings and facts of the whole
// fleet are carved out of one allocation each. Records written as JSON by older versions are
// still read (their first byte is '{').
//
// Layout (all integers are varints):
//
//	magic "RKI\x02" · saved (time, binary) · backend (string ref)
//	strings: count, then (len, bytes)… — entry 0 is always ""
//	totals: sandboxes, members, findings, facts · fleet flags
//	per sandbox: id name backend endpoint status · created · labels · task sample · flags ·
//	             members (id name service state image · created · restarts · labels · running)…
//	             findings (rule severity axis member message evidence network)… · facts (key value)… ·
//	             nil flags · posture pending (when its flag is set)
var invMagic = []byte("RKI\x02")

// invMagicV1 is the layout before findings carried their network; such records are still read.
var invMagicV1 = []byte("RKI\x01")

// newDecoder reads raw's magic: nil when raw is not in the binary layout.
func newDecoder(raw []byte) *decoder {
	if len(raw) < len(invMagic) {
		return nil
	}
	switch string(raw[:len(invMagic)]) {
	case string(invMagic):
		return &decoder{raw: raw, off: len(invMagic)}
	case string(invMagicV1):
		return &decoder{raw: raw, off: len(invMagic), v1: true}
	}
	return nil
}

// encoder builds the string table while it writes the body.
type encoder struct {
	strs  map[string]uint64
	table []string
	body  []byte
	// recent is a small direct-mapped cache in front of strs: most strings of a fleet are the
	// same few rule IDs, messages and member names over and over, and comparing two equal
	// strings that share their bytes is much cheaper than hashing one.
	recent [256]struct {
		s string
		i uint64
	}
	keys []string // scratch for labels' sorted keys
}

func (e *encoder) str(s string) {
	var slot uint8
	if n := len(s); n > 0 {
		slot = uint8(n) ^ s[0]<<1 ^ s[n-1]<<3 ^ s[n/2]<<5
	}
	c := &e.recent[slot]
	if c.s != s {
		i, ok := e.strs[s]
		if !ok {
			i = uint64(len(e.table))
			e.strs[s] = i
			e.table = append(e.table, s)
		}
		c.s, c.i = s, i
	}
	e.body = binary.AppendUvarint(e.body, c.i)
}

func (e *encoder) uint(v uint64) { e.body = binary.AppendUvarint(e.body, v) }

func (e *encoder) time(t time.Time) {
	// The length goes first; time's binary form is 15 to 16 bytes, so its varint is one byte
	// and the form is appended in place, not allocated.
	at := len(e.body)
	e.body = append(e.body, 0)
	body, err := t.AppendBinary(e.body)
	if err != nil { // a zone offset that is not a whole minute: keep the instant in UTC
		body, _ = t.UTC().AppendBinary(e.body)
	}
	e.body = body
	e.body[at] = byte(len(e.body) - at - 1)
}

// labels are written in key order, so an unchanged fleet encodes to the same bytes. A label
// whose name says it holds a credential keeps its name only (the redaction layer, seal.go).
func (e *encoder) labels(m map[string]string) {
	e.uint(uint64(len(m)))
	e.keys = e.keys[:0]
	for k := range m {
		e.keys = append(e.keys, k)
	}
	slices.Sort(e.keys)
	for _, k := range e.keys {
		e.str(k)
		if v := m[k]; v != "" && redact.IsSecretName(k) {
			e.str(redact.Mark)
		} else {
			e.str(v)
		}
	}
}

// encodeInventory writes rec in the binary layout.
func encodeInventory(rec InventoryRecord) []byte {
	var members, findings, facts int
	for i := range rec.Sandboxes {
		sb := &rec.Sandboxes[i]
		members += len(sb.Members)
		findings += len(sb.Findings)
		facts += len(sb.Extra)
	}
	// Sized once from the counts (string indices are a byte or two, times 16 bytes), so the
	// body is not regrown and copied a dozen times: a save's garbage sets the GC's pace.
	n := len(rec.Sandboxes)
	e := &encoder{strs: make(map[string]uint64, n+members+64), table: make([]string, 1, n+members+64),
		body: make([]byte, 0, 64*n+48*members+12*findings+4*facts+64)}
	e.strs[""] = 0 // table[0]
	e.uint(uint64(len(rec.Sandboxes)))
	e.uint(uint64(members))
	e.uint(uint64(findings))
	e.uint(uint64(facts))
	e.uint(flags(rec.Sandboxes == nil))
	for i := range rec.Sandboxes {
		sb := &rec.Sandboxes[i]
		e.str(sb.ID)
		e.str(sb.Name)
		e.str(string(sb.Backend))
		e.str(sb.Endpoint)
		e.str(string(sb.Status))
		e.time(sb.Created)
		e.labels(sb.Labels)
		e.str(sb.Task)
		e.str(sb.Sample)
		e.uint(flags(sb.Inspect, sb.Actionable, sb.Simulated, sb.Labels == nil))
		e.uint(uint64(len(sb.Members)))
		for j := range sb.Members {
			m := &sb.Members[j]
			e.str(m.ID)
			e.str(m.Name)
			e.str(m.Service)
			e.str(m.State)
			e.str(m.Image)
			e.time(m.Created)
			e.uint(uint64(int64(m.Restarts)))
			e.labels(m.Labels)
			e.uint(flags(m.Running, m.Labels == nil))
		}
		e.uint(uint64(len(sb.Findings)))
		for j := range sb.Findings {
			f := &sb.Findings[j]
			e.str(f.RuleID)
			e.uint(uint64(int64(f.Severity)))
			e.str(string(f.Axis))
			e.str(f.Member)
			e.str(f.Message)
			e.str(f.Evidence)
			e.str(f.Network)
		}
		e.uint(uint64(len(sb.Extra)))
		for _, kv := range sb.Extra {
			e.str(kv.Key)
			e.str(kv.Value)
		}
		// A nil slice and an empty one read back the same way they were written. The pending
		// posture came later: its flag is clear, and its string absent, in older records.
		e.uint(flags(sb.Members == nil, sb.Findings == nil, sb.Extra == nil, sb.PosturePending != ""))
		if sb.PosturePending != "" {
			e.str(sb.PosturePending)
		}
	}
	head := &encoder{}
	head.body = append(head.body, invMagic...)
	head.time(rec.Saved)
	head.uint(uint64(len(rec.Backend)))
	head.body = append(head.body, rec.Backend...)
	head.uint(uint64(len(e.table)))
	size := len(head.body) + len(e.body)
	// The redaction layer (seal.go) on every distinct string once: credential-shaped values
	// never reach the file, and the lengths stay right because the table is written after it.
	for i, s := range e.table {
		e.table[i] = redact.Text(s)
		size += len(e.table[i]) + binary.MaxVarintLen32
	}
	out := make([]byte, 0, size)
	out = append(out, head.body...)
	for _, s := range e.table {
		out = binary.AppendUvarint(out, uint64(len(s)))
		out = append(out, s...)
	}
	return append(out, e.body...)
}

func flags(bs ...bool) uint64 {
	var v uint64
	for i, b := range bs {
		if b {
			v |= 1 << i
		}
	}
	return v
}

var errCorrupt = errors.New("corrupt inventory record")

// decoder reads the binary layout; every read is bounds-checked and a malformed record is an
// error, never a panic or an allocation larger than the record allows.
type decoder struct {
	raw   []byte
	off   int
	table []string
	err   error
	v1    bool // findings without their network (invMagicV1)
}

func (d *decoder) fail(what string) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: bad %s at byte %d", errCorrupt, what, d.off)
	}
}

func (d *decoder) uint(what string) uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.raw[d.off:])
	if n <= 0 {
		d.fail(what)
		return 0
	}
	d.off += n
	return v
}

// count reads a number of items that each take at least one byte, so it can never exceed what
// is left of the record.
func (d *decoder) count(what string) int {
	v := d.uint(what)
	if v > uint64(len(d.raw)-d.off) {
		d.fail(what)
		return 0
	}
	return int(v)
}

func (d *decoder) bytes(what string) []byte {
	n := d.count(what)
	if d.err != nil {
		return nil
	}
	b := d.raw[d.off : d.off+n]
	d.off += n
	return b
}

func (d *decoder) str(what string) string {
	i := d.uint(what)
	if i >= uint64(len(d.table)) {
		d.fail(what)
		return ""
	}
	return d.table[i]
}

func (d *decoder) time(what string) time.Time {
	var t time.Time
	if raw := d.bytes(what); d.err == nil {
		if err := t.UnmarshalBinary(raw); err != nil {
			d.fail(what)
		}
	}
	return t
}

func (d *decoder) labels(what string) map[string]string {
	n := d.count(what)
	if d.err != nil {
		return nil
	}
	m := make(map[string]string, n)
	for range n {
		k := d.str(what)
		m[k] = d.str(what)
	}
	return m
}

// nilIfFlag: whether a label map was nil is written after the map (in the flags), so the
// decoder reads the map first and drops it when it was nil.
func nilIfFlag(m map[string]string, isNil bool) map[string]string {
	if isNil && len(m) == 0 {
		return nil
	}
	return m
}

// take reads how many items one sandbox has and hands them out of pool: consecutive
// sub-slices of one backing array, each capped at its length so an append by a caller
// reallocates instead of overwriting the next sandbox's items.
func take[T any](d *decoder, what string, pool *[]T) []T {
	n := d.count(what)
	if n > len(*pool) {
		d.fail(what)
	}
	if d.err != nil {
		return nil
	}
	s := (*pool)[:n:n]
	*pool = (*pool)[n:]
	return s
}

// finding reads one posture finding.
func (d *decoder) finding() sandbox.Finding {
	f := sandbox.Finding{RuleID: d.str("rule"), Severity: sandbox.Severity(int64(d.uint("severity"))),
		Axis: sandbox.Axis(d.str("axis")), Member: d.str("finding member"), Message: d.str("message"), Evidence: d.str("evidence")}
	if !d.v1 {
		f.Network = d.str("network")
	}
	return f
}

// inventoryBody is a binary record without its saved time: two saves of an unchanged fleet
// have equal bodies. It is nil for a record that is not in the binary layout.
func inventoryBody(raw []byte) []byte {
	d := newDecoder(raw)
	if d == nil || d.v1 {
		return nil // not comparable with what is written now
	}
	d.time("saved time")
	if d.err != nil {
		return nil
	}
	return raw[d.off:]
}

// decodeInventory reads a record written by encodeInventory.
func decodeInventory(raw []byte) (InventoryRecord, error) { return decodeRecord(raw, false) }

// decodeRecord reads a record written by encodeInventory; outline leaves the findings encoded
// (InventoryOutlines): the record keeps a copy of their bytes, not of raw.
func decodeRecord(raw []byte, outline bool) (InventoryRecord, error) {
	var rec InventoryRecord
	d := newDecoder(raw)
	if d == nil {
		return rec, fmt.Errorf("%w: unknown format", errCorrupt)
	}
	rec.Saved = d.time("saved time")
	rec.Backend = string(d.bytes("backend"))
	d.table = make([]string, d.count("string table"))
	for i := range d.table {
		d.table[i] = string(d.bytes("string"))
	}
	nsb := d.count("sandbox count")
	members := make([]sandbox.Member, d.count("member total"))
	nFindings := d.count("finding total")
	var findings []sandbox.Finding
	if !outline {
		findings = make([]sandbox.Finding, nFindings)
	}
	facts := make([]sandbox.KeyValue, d.count("fact total"))
	nilFleet := d.uint("fleet flags")&1 != 0
	if d.err != nil || nilFleet && nsb == 0 {
		return rec, d.err
	}
	rec.Sandboxes = make([]sandbox.Sandbox, nsb)
	var o *findingsOutline
	if outline {
		// One copy of the sandboxes' bytes: copying each findings list on its own grew the
		// buffer by appends to twice its size, pages a fresh process faults in one by one
		// before the cached rows show.
		o = &findingsOutline{raw: bytes.Clone(raw[d.off:]), base: d.off, table: d.table, at: make([]int, nsb), worst: make([]sandbox.Severity, nsb), count: make([]int, nsb), v1: d.v1}
		rec.outline = o
	}
	for i := range rec.Sandboxes {
		sb := &rec.Sandboxes[i]
		sb.ID = d.str("sandbox id")
		sb.Name = d.str("name")
		sb.Backend = sandbox.Kind(d.str("backend"))
		sb.Endpoint = d.str("endpoint")
		sb.Status = sandbox.Status(d.str("status"))
		sb.Created = d.time("created")
		sb.Labels = d.labels("labels")
		sb.Task = d.str("task")
		sb.Sample = d.str("sample")
		f := d.uint("flags")
		sb.Inspect, sb.Actionable, sb.Simulated = f&1 != 0, f&2 != 0, f&4 != 0
		sb.Labels = nilIfFlag(sb.Labels, f&8 != 0)
		if sb.Members = take(d, "members", &members); d.err != nil {
			return rec, d.err
		}
		for j := range sb.Members {
			m := &sb.Members[j]
			m.ID = d.str("member id")
			m.Name = d.str("member name")
			m.Service = d.str("service")
			m.State = d.str("state")
			m.Image = d.str("image")
			m.Created = d.time("member created")
			m.Restarts = int(int64(d.uint("restarts")))
			m.Labels = d.labels("member labels")
			mf := d.uint("member flags")
			m.Running = mf&1 != 0
			m.Labels = nilIfFlag(m.Labels, mf&2 != 0)
		}
		if o != nil {
			d.outlineFindings(o, i)
		} else if sb.Findings = take(d, "findings", &findings); d.err == nil {
			for j := range sb.Findings {
				sb.Findings[j] = d.finding()
			}
		}
		if d.err != nil {
			return rec, d.err
		}
		if sb.Extra = take(d, "facts", &facts); d.err != nil {
			return rec, d.err
		}
		for j := range sb.Extra {
			sb.Extra[j] = sandbox.KeyValue{Key: d.str("fact key"), Value: d.str("fact value")}
		}
		nf := d.uint("nil flags")
		if nf&1 != 0 {
			sb.Members = nil
		}
		if nf&2 != 0 {
			sb.Findings = nil // (an outlined sandbox has none either way)
		}
		if nf&4 != 0 {
			sb.Extra = nil
		}
		if nf&8 != 0 {
			sb.PosturePending = d.str("posture pending")
		}
	}
	if d.err == nil && d.off != len(raw) {
		d.fail("trailing data")
	}
	return rec, d.err
}
