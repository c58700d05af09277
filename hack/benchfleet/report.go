package main

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"time"
)

// report prints, per fleet size, the median of each figure per tool and rangekeeper/k9s.
func report(all []result, sizes []int, tools []*tool, b *bench) string {
	var w strings.Builder
	load, _ := loadavg()
	fmt.Fprintf(&w, "\nbench-fleet %s · tmux %d×%d · idle %s · CPU window %s · %d cores · load %s\n",
		time.Now().Format(time.DateTime), b.width, b.height, b.idle, min(b.cpuWindow, b.idle), runtime.NumCPU(), load)
	type metric struct {
		name string
		get  func(result) float64
		unit func(float64) string
	}
	secs := func(v float64) string { return fmt.Sprintf("%.2f s", v) }
	ms := func(v float64) string { return fmt.Sprintf("%.0f ms", v) }
	ms1 := func(v float64) string { return fmt.Sprintf("%.1f ms", v) }
	mibs := func(v float64) string { return fmt.Sprintf("%.0f MiB", v) }
	pct := func(v float64) string { return fmt.Sprintf("%.2f %%", v) }
	metrics := []metric{
		{"full live table", func(r result) float64 { return r.fullTable.Seconds() }, secs},
		{"filter to screen", func(r result) float64 { return float64(r.filter.Milliseconds()) }, ms},
		{"RSS when full", func(r result) float64 { return float64(r.rssFull) / (1 << 20) }, mibs},
		{"RSS after idle", func(r result) float64 { return float64(r.rssIdle) / (1 << 20) }, mibs},
		{"RSS peak while idle", func(r result) float64 { return float64(r.rssPeak) / (1 << 20) }, mibs},
		{"idle CPU (of a core)", func(r result) float64 { return r.idleCPU }, pct},
		{"keys while loading", func(r result) float64 { return keysOr(r, float64(len(r.keys))) }, func(v float64) string { return fmt.Sprintf("%.0f", v) }},
		{"key→frame p50 loading", func(r result) float64 { return keysOr(r, quantile(r.keys, 0.5)) }, ms1},
		{"key→frame p99 loading", func(r result) float64 { return keysOr(r, quantile(r.keys, 0.99)) }, ms1},
		{"reference p50 loading", func(r result) float64 { return keysOr(r, quantile(r.refKeys, 0.5)) }, ms1},
		{"reference p99 loading", func(r result) float64 { return keysOr(r, quantile(r.refKeys, 0.99)) }, ms1},
		{"full table, keys pressed", func(r result) float64 { return keysOr(r, r.keysFull.Seconds()) }, secs},
		{"key→frame p99 full", func(r result) float64 { return keysOr(r, quantile(r.idleKeys, 0.99)) }, ms1},
		{"restart: first frame", func(r result) float64 { return restartOr(r, r.restartFrame) }, ms},
		{"restart: every release", func(r result) float64 { return restartOr(r, r.restartRows) }, ms},
	}
	for _, pods := range sizes {
		if b.demo {
			fmt.Fprintf(&w, "\nrangekeeper demo --fleet %d (SIMULATED releases beside the Docker demo range)\n", pods)
		} else {
			fmt.Fprintf(&w, "\n%d pods (%d releases)\n", pods, pods/b.spec.perRel)
		}
		fmt.Fprintf(&w, "%-22s", "")
		for _, t := range tools {
			fmt.Fprintf(&w, " %14s", t.name)
		}
		k9s := slices.IndexFunc(tools, func(t *tool) bool { return t.name == "k9s" })
		for i, t := range tools {
			if k9s >= 0 && i != k9s {
				fmt.Fprintf(&w, " %14s", t.name+"/k9s")
			}
		}
		fmt.Fprintln(&w)
		for _, m := range metrics {
			fmt.Fprintf(&w, "%-22s", m.name)
			var med []float64
			for _, t := range tools {
				var vs []float64
				for _, r := range all {
					if r.tool == t.name && r.pods == pods && r.err == nil && (m.name != "filter to screen" || r.filterErr == nil) {
						if v := m.get(r); !math.IsNaN(v) {
							vs = append(vs, v)
						}
					}
				}
				if len(vs) == 0 {
					fmt.Fprintf(&w, " %14s", "-")
					med = append(med, 0)
					continue
				}
				v := median(vs)
				med = append(med, v)
				cell := m.unit(v)
				if len(vs) > 1 {
					cell += fmt.Sprintf(" (n=%d)", len(vs))
				}
				fmt.Fprintf(&w, " %14s", cell)
			}
			for i := range tools {
				if k9s < 0 || i == k9s {
					continue
				}
				if med[i] > 0 && med[k9s] > 0 {
					fmt.Fprintf(&w, " %13.2f×", med[i]/med[k9s])
				} else {
					fmt.Fprintf(&w, " %14s", "-")
				}
			}
			fmt.Fprintln(&w)
		}
	}
	for _, pods := range sizes {
		w.WriteString(pooledKeys(all, pods, tools))
	}
	for _, r := range all {
		if err := errors.Join(r.err, r.filterErr, r.keysErr, r.restartErr); err != nil {
			fmt.Fprintf(&w, "\n%s at %d pods: %v\n", r.tool, r.pods, firstLines(err.Error(), 60))
		}
	}
	return w.String()
}

// restartOr is d in milliseconds when the run's restart was measured, else NaN (not shown).
func restartOr(r result, d time.Duration) float64 {
	if r.restartErr != nil || r.restartFrame == 0 {
		return math.NaN()
	}
	return float64(d.Microseconds()) / 1000
}

// keysOr is v when the run's keys-while-loading phase measured something, else NaN (not shown).
func keysOr(r result, v float64) float64 {
	if r.keysErr != nil || len(r.keys) == 0 {
		return math.NaN()
	}
	return v
}

func median(vs []float64) float64 {
	s := slices.Clone(vs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func firstLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, "\n")
}

// pooledKeys summarises the key presses of every run at one fleet size, pooled: with 40-80
// presses a run, a run's p99 is its slowest press, and the median of a few such maxima moves
// more between runs than between builds. Empty unless some tool has presses from two runs.
func pooledKeys(all []result, pods int, tools []*tool) string {
	var w strings.Builder
	for _, t := range tools {
		var loading, ref []time.Duration
		runs := 0
		for _, r := range all {
			if r.tool == t.name && r.pods == pods && len(r.keys) > 0 {
				loading, ref, runs = append(loading, r.keys...), append(ref, r.refKeys...), runs+1
			}
		}
		if runs < 2 {
			continue
		}
		fmt.Fprintf(&w, "%s at %d pods, key presses of %d runs pooled: while loading p50 %.1f ms, p90 %.1f ms, p99 %.1f ms (n=%d); reference p99 %.1f ms (n=%d)\n",
			t.name, pods, runs, quantile(loading, 0.5), quantile(loading, 0.9), quantile(loading, 0.99), len(loading), quantile(ref, 0.99), len(ref))
	}
	if w.Len() == 0 {
		return ""
	}
	return "\n" + w.String()
}
