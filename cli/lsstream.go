package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/backends/supervisor"
	"github.com/rangekeeper/rangekeeper/internal/redact"
)

// streamLsJSON writes `ls -o json` ({"sandboxes": [...], "backends": [...]}, the lsResult
// shape) one backend at a time, as each answers, sorted by ID within a backend, one sandbox
// encoded at a time: the first backend's sandboxes are out while a slow one is still awaited,
// and memory holds one backend's copy, never the whole document. Backends that do not answer
// within --wait are reported on stderr, as ReadySupervisor does. Each sandbox carries its
// Inspect eval and sample ("eval"), linked against one poll taken before the first backend.
func streamLsJSON(ctx context.Context, f *factory, s *supervisor.Supervisor, o *lsOptions) error {
	w := bufio.NewWriterSize(f.Out, 64<<10)
	ready := make(chan string, len(s.Backends()))
	wctx, cancel := context.WithTimeout(ctx, o.Wait)
	defer cancel()
	for _, b := range s.Backends() {
		go func() {
			select {
			case <-s.Ready(b.Name()):
				ready <- b.Name()
			case <-wctx.Done():
			}
		}()
	}
	var (
		buf   bytes.Buffer
		enc   = json.NewEncoder(&buf)
		first = true
		err   error
	)
	enc.SetIndent("    ", "  ")
	put := func(v any) {
		buf.Reset()
		if e := enc.Encode(v); e != nil && err == nil {
			err = e
		}
		w.Write(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
	}
	evals := f.evalsOrNone(ctx)
	w.WriteString("{\n  \"sandboxes\": [")
	answered := map[string]bool{}
wait:
	for len(answered) < len(s.Backends()) {
		select {
		case name := <-ready:
			answered[name] = true
			sbs, _ := s.FleetOf(name)
			slices.SortFunc(sbs, func(a, b backends.Sandbox) int { return strings.Compare(a.ID, b.ID) })
			for i := range sbs {
				if first {
					w.WriteString("\n    ")
				} else {
					w.WriteString(",\n    ")
				}
				first = false
				put(lsSandbox{Sandbox: sbs[i], Eval: linkOf(evals, sbs[i])})
				sbs[i] = backends.Sandbox{} // written: let it go
			}
			if ferr := w.Flush(); ferr != nil { // a reader sees each backend as soon as it answered
				return ferr
			}
		case <-wctx.Done():
			break wait
		}
	}
	if !first {
		w.WriteString("\n  ")
	}
	w.WriteString("],\n  \"backends\": ")
	health := s.Health()
	enc.SetIndent("  ", "  ")
	put(health)
	w.WriteString("\n}\n")
	for _, h := range health {
		if answered[h.Backend] {
			continue
		}
		why := h.LastError
		if why == "" {
			why = "no answer within " + o.Wait.String()
		}
		fmt.Fprintf(f.ErrOut, "rangekeeper: %s unreachable: %s\n", redact.Cell(h.Backend), redact.Message(why))
	}
	if ferr := w.Flush(); err == nil {
		err = ferr
	}
	return err
}
