package spec

import (
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkLintDemos measures lint throughput over every demo spec; files/s is the number the
// author view's debounce and CI runs care about.
func BenchmarkLintDemos(b *testing.B) {
	var paths []string
	for _, pat := range []string{"*.yaml", "*.conf", "*.fw"} {
		m, _ := filepath.Glob(filepath.Join("..", "demos", "specs", pat))
		paths = append(paths, m...)
	}
	var files [][]byte
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			b.Fatal(err)
		}
		files = append(files, data)
	}
	b.ReportAllocs()
	b.ResetTimer()
	n := 0
	for b.Loop() {
		for i, data := range files {
			if _, err := LintBytes(paths[i], data, Options{}); err != nil {
				b.Fatal(err)
			}
			n++
		}
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "files/s")
}
