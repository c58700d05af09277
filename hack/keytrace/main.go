// Command keytrace reads an execution trace of rangekeeper (the bench-fleet profiling hook:
// RANGEKEEPER_TRACE=FILE RANGEKEEPER_TRACE_FOR=30s) and prints key-to-frame inside the process:
// from each read of the terminal that returns (Bubble Tea's input reader leaving its read
// syscall) to the renderer's next write of a frame. It is the workbench's own share of what the
// bench-fleet harness times through tmux. Usage: keytrace [-from 1s] [-series] [-explain 40ms [-v]] FILE.
//
// It lives in a module of its own so that rangekeeper's go.mod does not take golang.org/x/exp.
package main

import (
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"
	"time"

	"golang.org/x/exp/trace"
)

func main() {
	from := flag.Duration("from", 0, "ignore reads earlier than this after the trace's start")
	series := flag.Bool("series", false, "print every read's time and latency")
	over := flag.Duration("explain", 0, "for each press slower than this, show where the input reader, the event loop and the renderer spent its time")
	verbose := flag.Bool("v", false, "with -explain: list every state of those goroutines within each slow press")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: keytrace [-from D] [-series] [-explain D [-v]] TRACE")
		os.Exit(2)
	}
	reads, writes, t0, err := scan(flag.Arg(0))
	if err != nil {
		fmt.Fprintln(os.Stderr, "keytrace:", err)
		os.Exit(1)
	}
	var lat []time.Duration
	var presses []press
	w := 0
	for _, r := range reads {
		if time.Duration(r-t0) < *from {
			continue
		}
		for w < len(writes) && writes[w] < r {
			w++
		}
		if w == len(writes) {
			break
		}
		d := time.Duration(writes[w] - r)
		lat = append(lat, d)
		presses = append(presses, press{read: r, frame: writes[w]})
		if *series {
			fmt.Printf("%7.3fs %v\n", time.Duration(r-t0).Seconds(), d)
		}
	}
	if len(lat) == 0 {
		fmt.Println("no terminal read followed by a frame")
		return
	}
	slices.Sort(lat)
	// the smallest latency that at least p of them do not exceed (bench-fleet's quantile)
	q := func(p float64) time.Duration { return lat[max(0, int(math.Ceil(p*float64(len(lat))))-1)] }
	fmt.Printf("terminal reads %d, frame writes %d; read → next frame: n=%d p50 %v p90 %v p99 %v max %v\n",
		len(reads), len(writes), len(lat), q(0.5), q(0.9), q(0.99), lat[len(lat)-1])
	if *over > 0 {
		if err := explain(flag.Arg(0), presses, t0, *over, *verbose); err != nil {
			fmt.Fprintln(os.Stderr, "keytrace:", err)
			os.Exit(1)
		}
	}
}

// scan returns when the terminal reads returned and when frame writes began.
func scan(path string) (reads, writes []trace.Time, t0 trace.Time, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, 0, err
	}
	defer f.Close()
	r, err := trace.NewReader(f)
	if err != nil {
		return nil, nil, 0, err
	}
	reading := map[trace.GoID]bool{}
	for {
		e, err := r.ReadEvent()
		if err == io.EOF {
			return reads, writes, t0, nil
		}
		if err != nil {
			return nil, nil, 0, err
		}
		if t0 == 0 {
			t0 = e.Time()
		}
		if e.Kind() != trace.EventStateTransition {
			continue
		}
		s := e.StateTransition()
		if s.Resource.Kind != trace.ResourceGoroutine {
			continue
		}
		g := s.Resource.Goroutine()
		from, to := s.Goroutine()
		if to == trace.GoSyscall {
			st := full(s.Stack)
			switch {
			case strings.HasPrefix(st, "syscall.read;") && strings.Contains(st, "cancelreader"):
				reading[g] = true // Bubble Tea's input reader
			case strings.HasPrefix(st, "syscall.write;") && strings.Contains(st, "cursedRenderer).flush"):
				writes = append(writes, e.Time())
			}
		}
		if from == trace.GoSyscall && to != trace.GoSyscall {
			if reading[g] {
				reads = append(reads, e.Time())
			}
			delete(reading, g)
		}
	}
}
