package state

import "github.com/rangekeeper/rangekeeper/sandbox"

// findingsOutline is where each sandbox's findings lie in a record read by InventoryOutlines.
type findingsOutline struct {
	raw   []byte   // the record's sandboxes, encoded, copied out of its transaction in one piece
	base  int      // where raw began in the record
	table []string // the record's string table
	at    []int    // per sandbox: the offset of its findings in raw (their count first)
	worst []sandbox.Severity
	count []int
	v1    bool // findings without their network (invMagicV1)
}

// Outlined reports whether the record's findings are left encoded (InventoryOutlines).
func (r InventoryRecord) Outlined() bool { return r.outline != nil }

// FindingsOf returns the findings of Sandboxes[i], decoding them when the record is outlined.
func (r InventoryRecord) FindingsOf(i int) []sandbox.Finding {
	o := r.outline
	if o == nil {
		return r.Sandboxes[i].Findings
	}
	if o.count[i] == 0 {
		return nil
	}
	d := &decoder{raw: o.raw, off: o.at[i], table: o.table, v1: o.v1}
	out := make([]sandbox.Finding, d.count("findings"))
	for j := range out {
		out[j] = d.finding()
	}
	return out
}

// WorstOf is Sandboxes[i]'s most severe finding's severity (SeverityNone without findings).
func (r InventoryRecord) WorstOf(i int) sandbox.Severity {
	if r.outline == nil {
		return r.Sandboxes[i].WorstSeverity()
	}
	return r.outline.worst[i]
}

// FindingCountOf is how many findings Sandboxes[i] has.
func (r InventoryRecord) FindingCountOf(i int) int {
	if r.outline == nil {
		return len(r.Sandboxes[i].Findings)
	}
	return r.outline.count[i]
}

// decodeInventoryOutline reads a record written by encodeInventory without materializing the
// findings: each is checked (the same errors as decodeInventory) and only its severity kept.
func decodeInventoryOutline(raw []byte) (InventoryRecord, error) {
	return decodeRecord(raw, true)
}

// outlineFindings reads sandbox i's findings list and notes where it lies in o.raw, its count and
// its worst severity.
func (d *decoder) outlineFindings(o *findingsOutline, i int) {
	start, worst := d.off, sandbox.SeverityNone
	n := d.count("findings")
	for range n {
		if f := d.finding(); f.Severity > worst {
			worst = f.Severity
		}
		if d.err != nil {
			return
		}
	}
	o.at[i], o.count[i], o.worst[i] = start-o.base, n, worst
}
