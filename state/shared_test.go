package state

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
)

// TestTwoHandlesOnOneFileBothWork opens one file twice in this process (as a workbench and a
// second command would) and writes and reads through both, interleaved and concurrently.
func TestTwoHandlesOnOneFileBothWork(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	a, b := open(t, path), open(t, path)
	defer a.Close()
	defer b.Close()
	var wg sync.WaitGroup
	for i, db := range []*DB{a, b} {
		wg.Go(func() {
			for n := range 20 {
				if _, err := db.Append(Entry{Action: "snapshot", Target: fmt.Sprintf("docker:h%d/s%d", i, n), Phase: PhaseIntent}); err != nil {
					t.Errorf("handle %d append %d: %v", i, n, err)
					return
				}
				if _, err := db.Journal(JournalQuery{Limit: 5}); err != nil {
					t.Errorf("handle %d journal: %v", i, err)
					return
				}
			}
		})
	}
	wg.Wait()
	for i, db := range []*DB{a, b} {
		all, err := db.Journal(JournalQuery{})
		if err != nil || len(all) != 40 {
			t.Fatalf("handle %d sees %d entries, %v; want all 40 from both handles", i, len(all), err)
		}
	}
	if err := a.SaveInventory(InventoryRecord{Backend: "docker"}); err != nil {
		t.Fatal(err)
	}
	if inv, err := b.Inventory(); err != nil || len(inv) != 1 {
		t.Errorf("inventory saved through one handle, read through the other = %v, %v", inv, err)
	}
}

// TestTwoProcessesOnOneFileBothWork runs a child process appending to the file while this one
// does the same: neither waits out LockTimeout, and every entry of both is there.
func TestTwoProcessesOnOneFileBothWork(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	db := open(t, path)
	defer db.Close()
	cmd := exec.Command(os.Args[0], "-test.run=TestHelperAppendLoop")
	cmd.Env = append(os.Environ(), "RK_APPEND_LOOP="+path)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for n := range 30 {
		if _, err := db.Append(Entry{Action: "revert", Target: "docker:parent/" + strconv.Itoa(n), Phase: PhaseIntent}); err != nil {
			t.Fatalf("parent append %d beside the child: %v", n, err)
		}
	}
	buf := make([]byte, 64)
	k, _ := out.Read(buf)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("child: %v (%q)", err, buf[:k])
	}
	all, err := db.Journal(JournalQuery{})
	if err != nil || len(all) != 60 {
		t.Fatalf("journal has %d entries, %v; want 30 from each process", len(all), err)
	}
}

// TestHelperAppendLoop is not a test: TestTwoProcessesOnOneFileBothWork runs it as the child.
func TestHelperAppendLoop(t *testing.T) {
	path := os.Getenv("RK_APPEND_LOOP")
	if path == "" {
		t.Skip("helper process only")
	}
	db, err := Open(path)
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(3)
	}
	for n := range 30 {
		if _, err := db.Append(Entry{Action: "snapshot", Target: "docker:child/" + strconv.Itoa(n), Phase: PhaseIntent}); err != nil {
			fmt.Println("append:", err)
			os.Exit(4)
		}
	}
	fmt.Println("done")
}
