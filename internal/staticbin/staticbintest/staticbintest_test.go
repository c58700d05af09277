package staticbintest

import (
	"debug/elf"
	"testing"
)

// The helper a sandbox gets must run there without a libc: no dynamic interpreter, no symbols.
func TestBuildMakesAStaticStrippedBinary(t *testing.T) {
	bin, err := Build(t.TempDir(), "rangekeeper-canary")
	if err != nil {
		t.Fatal(err)
	}
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Error("the binary asks for a dynamic loader: not static")
		}
	}
	if f.Section(".symtab") != nil {
		t.Error("the binary keeps its symbol table: not stripped (-s -w)")
	}
	if _, err := Build(t.TempDir(), "no-such-helper"); err == nil {
		t.Error("building a missing command succeeded")
	}
}
