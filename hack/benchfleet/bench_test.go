package main

import (
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// The screen predicates read the tools' real screens (lines captured from tmux).
func TestScreenPredicates(t *testing.T) {
	rk, k9s := rangekeeperTool("rangekeeper", "rk"), k9sTool("k9s")
	const (
		rkFull    = "rangekeeper  2503/2503 sandboxes  sort:backend ^\n[ok] docker:default  [ok] k8s:envtest\n"
		rkLoading = "rangekeeper  3/3 sandboxes  sort:backend ^\n[ok] docker:default  [..] k8s:envtest connecting\n"
		rkPartial = "rangekeeper  1200/2503 sandboxes  sort:backend ^\n[ok] docker:default  [ok] k8s:envtest\n"
		rkFilter  = "rangekeeper  1/2503 sandboxes  sort:backend ^  filter:rk001250\n[ok] k8s:envtest\n"
		k9sFull   = "┌──── pods(all)[5,000] ────┐"
		k9sSome   = "┌──── pods(all)[4,999] ────┐"
		k9sFilter = "┌──── pods(all)[2] </rk001250> ────┐"
	)
	cases := []struct {
		name string
		got  bool
		want bool
	}{
		{"rangekeeper full", rk.full(rkFull, 2500, 5000), true},
		{"rangekeeper still connecting", rk.full(rkLoading, 2500, 5000), false},
		{"rangekeeper filtered view is not full", rk.full(rkPartial, 2500, 5000), false},
		{"rangekeeper filtered", rk.filtered(rkFilter, 2), true},
		{"rangekeeper unfiltered", rk.filtered(rkFull, 2), false},
		{"k9s full with a thousands separator", k9s.full(k9sFull, 2500, 5000), true},
		{"k9s one pod short", k9s.full(k9sSome, 2500, 5000), false},
		{"k9s filtered", k9s.filtered(k9sFilter, 2), true},
		{"k9s unfiltered", k9s.filtered(k9sFull, 2), false},
		{"rangekeeper help open", rk.helpShown("rangekeeper keys\n\nNavigation\n"), true},
		{"rangekeeper help closed", rk.helpShown(rkFull), false},
	}
	for _, tc := range cases {
		if tc.got != tc.want {
			t.Errorf("%s: got %v, want %v", tc.name, tc.got, tc.want)
		}
	}
}

func TestSizesAndMedian(t *testing.T) {
	if got, err := parseSizes("5000, 50000"); err != nil || len(got) != 2 || got[1] != 50000 {
		t.Errorf("parseSizes = %v, %v", got, err)
	}
	for _, bad := range []string{"50000,5000", "x", "0"} {
		if _, err := parseSizes(bad); err == nil {
			t.Errorf("parseSizes(%q) accepted", bad)
		}
	}
	if m := median([]float64{3, 1, 2}); m != 2 {
		t.Errorf("median odd = %v", m)
	}
	if m := median([]float64{4, 1, 2, 3}); m != 2.5 {
		t.Errorf("median even = %v", m)
	}
	var ds []time.Duration
	for i := 1; i <= 100; i++ {
		ds = append(ds, time.Duration(i)*time.Millisecond)
	}
	if q := quantile(ds, 0.99); q != 99 {
		t.Errorf("p99 of 1..100 ms = %v, want 99 (the second largest)", q)
	}
	if q := quantile(ds[:30], 0.99); q != 30 {
		t.Errorf("p99 of 1..30 ms = %v, want 30 (the largest)", q)
	}
	if q := quantile(nil, 0.5); !math.IsNaN(q) {
		t.Errorf("quantile of nothing = %v, want NaN", q)
	}
	if v := keysOr(result{}, 5); !math.IsNaN(v) {
		t.Errorf("keysOr without keys = %v, want NaN (not shown)", v)
	}
}

// The /proc readers work on this very process.
func TestProcReaders(t *testing.T) {
	r, err := rss(os.Getpid())
	if err != nil || r < 1<<20 {
		t.Fatalf("rss = %d, %v", r, err)
	}
	c0, err := cpuTime(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	for end := time.Now().Add(150 * time.Millisecond); time.Now().Before(end); {
	}
	if c1, _ := cpuTime(os.Getpid()); c1 <= c0 {
		t.Errorf("cpuTime did not advance over 150 ms of busy loop: %v → %v", c0, c1)
	}
}

// Key presses are pooled across runs (a run's p99 is its slowest press) and saved per start.
func TestKeysPooledAndSaved(t *testing.T) {
	ms := func(vs ...int) (ds []time.Duration) {
		for _, v := range vs {
			ds = append(ds, time.Duration(v)*time.Millisecond)
		}
		return ds
	}
	tools := []*tool{{name: "rangekeeper"}, {name: "k9s"}}
	all := []result{
		{tool: "rangekeeper", pods: 5000, keys: ms(10, 20, 300), refKeys: ms(5)},
		{tool: "rangekeeper", pods: 5000, keys: ms(30, 40), refKeys: ms(7, 9)},
		{tool: "rangekeeper", pods: 50000, keys: ms(1000)}, // another size: not pooled with these
		{tool: "k9s", pods: 5000}, // no help marker: no presses
	}
	got := pooledKeys(all, 5000, tools)
	want := "\nrangekeeper at 5000 pods, key presses of 2 runs pooled: while loading p50 30.0 ms, p90 300.0 ms, p99 300.0 ms (n=5); reference p99 9.0 ms (n=3)\n"
	if got != want {
		t.Errorf("pooledKeys =\n%q\nwant\n%q", got, want)
	}
	if got := pooledKeys(all, 50000, tools); got != "" {
		t.Errorf("one run pooled: %q, want nothing", got)
	}

	b := &bench{out: t.TempDir()}
	if err := b.saveKeys("rangekeeper", 5000, result{keys: ms(12), idleKeys: ms(3), refKeys: ms(4)}); err != nil {
		t.Fatal(err)
	}
	body, err := os.ReadFile(filepath.Join(b.out, "keys-rangekeeper-5000-001.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "loading\t12.000\nfull\t3.000\nreference\t4.000\n"; string(body) != want {
		t.Errorf("saved presses %q, want %q", body, want)
	}
}
