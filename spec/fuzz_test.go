package spec

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// fuzzFormat feeds arbitrary bytes to one parser (and the rules behind it). Any result is fine
// except a recovered panic or an error that does not name the file and a line.
func fuzzFormat(f *testing.F, format Format, seeds ...string) {
	for _, s := range seeds {
		for _, dir := range []string{filepath.Join("..", "demos", "specs"), filepath.Join("testdata", "rules"), filepath.Join("testdata", "malformed")} {
			matches, _ := filepath.Glob(filepath.Join(dir, s))
			for _, m := range matches {
				if data, err := os.ReadFile(m); err == nil {
					f.Add(data)
				}
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		// A hang is a failure too (Go's fuzzer would just stall on it): give each input a bound.
		var err error
		done := make(chan struct{})
		go func() {
			defer close(done)
			_, err = LintBytes("fuzz.in", data, Options{Format: format, MaxBytes: 64 << 10})
		}()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("lint did not finish within 10s on %q", data)
		}
		if err == nil {
			return
		}
		var ie *InputError
		if !errors.As(err, &ie) {
			t.Fatalf("non-input error: %v", err)
		}
		if ie.internal {
			t.Fatalf("parser panicked: %v", err)
		}
		if ie.File != "fuzz.in" || ie.Line < 1 {
			t.Fatalf("error without file and line: %v", err)
		}
	})
}

func FuzzCompose(f *testing.F) {
	fuzzFormat(f, FormatCompose, "compose-*.yaml", "CMP-*.yaml", "*.yaml")
}
func FuzzHelm(f *testing.F)    { fuzzFormat(f, FormatHelm, "values-*.yaml", "HELM-*.yaml", "K8S-*.yaml") }
func FuzzProxmox(f *testing.F) { fuzzFormat(f, FormatProxmox, "proxmox-*.yaml", "PVE-*.yaml") }
func FuzzQM(f *testing.F)      { fuzzFormat(f, FormatQM, "qm-*.conf", "PVE-*.conf", "*.fw") }
func FuzzDetect(f *testing.F)  { fuzzFormat(f, FormatUnknown, "*") }
