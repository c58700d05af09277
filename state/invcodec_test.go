package state

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/rangekeeper/rangekeeper/sandbox"
	"github.com/rangekeeper/rangekeeper/spec/catalog"
)

// fill sets every exported field reachable from v to a distinct non-zero value, so a field
// added to sandbox.Sandbox later that the codec does not carry fails the round trip below.
func fill(v reflect.Value, n *int) {
	*n++
	switch v.Kind() {
	case reflect.String:
		v.SetString(fmt.Sprintf("s%d", *n))
	case reflect.Int, reflect.Int64:
		v.SetInt(int64(*n))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		for range 2 {
			k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
			fill(k, n)
			fill(e, n)
			m.SetMapIndex(k, e)
		}
		v.Set(m)
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 2, 2)
		for i := range 2 {
			fill(s.Index(i), n)
		}
		v.Set(s)
	case reflect.Struct:
		if v.Type() == reflect.TypeOf(time.Time{}) {
			v.Set(reflect.ValueOf(time.Date(2026, 1, 2, 3, 4, 5, *n, time.UTC)))
			return
		}
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i), n)
			}
		}
	default:
		panic("fill: add a case for " + v.Kind().String())
	}
}

func TestInventoryCodecCarriesEveryField(t *testing.T) {
	n := 0
	var full sandbox.Sandbox
	fill(reflect.ValueOf(&full).Elem(), &n)
	zone := time.FixedZone("CEST", 2*3600)
	cases := map[string]InventoryRecord{
		"every field set": {Backend: "k8s:ctx", Saved: time.Date(2026, 5, 6, 7, 8, 9, 10, time.UTC), Sandboxes: []sandbox.Sandbox{full, full}},
		"nil and empty kept apart": {Backend: "docker:x", Sandboxes: []sandbox.Sandbox{
			{ID: "a", Members: []sandbox.Member{}, Findings: []sandbox.Finding{}, Extra: []sandbox.KeyValue{}, Labels: map[string]string{}},
			{ID: "b", Members: []sandbox.Member{{ID: "m", Labels: map[string]string{}}}},
		}},
		"zoned and zero times": {Backend: "pve:r", Saved: time.Date(2026, 5, 6, 7, 8, 9, 0, zone), Sandboxes: []sandbox.Sandbox{
			{ID: "z", Created: time.Date(2026, 1, 1, 0, 0, 0, 0, zone), Members: []sandbox.Member{{Restarts: -1}}},
		}},
		"no sandboxes": {Backend: "docker:empty"},
	}
	for name, rec := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := decodeInventory(encodeInventory(rec))
			if err != nil {
				t.Fatal(err)
			}
			if !got.Saved.Equal(rec.Saved) {
				t.Errorf("Saved = %v, want %v", got.Saved, rec.Saved)
			}
			got.Saved, rec.Saved = time.Time{}, time.Time{}
			for i := range got.Sandboxes { // compare instants, not *time.Location pointers
				normalise(&got.Sandboxes[i])
				normalise(&rec.Sandboxes[i])
			}
			if !reflect.DeepEqual(got, rec) {
				t.Errorf("round trip lost data (a new field must be added to state/invcodec.go):\n got %+v\nwant %+v", got, rec)
			}
		})
	}
}

func normalise(sb *sandbox.Sandbox) {
	sb.Created = sb.Created.UTC()
	for i := range sb.Members {
		sb.Members[i].Created = sb.Members[i].Created.UTC()
	}
}

// A decoded fleet shares backing arrays; appending to one sandbox's members must not spill into
// the next sandbox's.
func TestInventoryDecodedSlicesDoNotAlias(t *testing.T) {
	rec := InventoryRecord{Backend: "k8s:x", Sandboxes: k8sFleet(3)}
	got, err := decodeInventory(encodeInventory(rec))
	if err != nil {
		t.Fatal(err)
	}
	next := got.Sandboxes[1].Members[0].Name
	_ = append(got.Sandboxes[0].Members, sandbox.Member{Name: "appended"})
	_ = append(got.Sandboxes[0].Findings, sandbox.Finding{RuleID: "appended"})
	if got.Sandboxes[1].Members[0].Name != next || got.Sandboxes[1].Findings[0].RuleID == "appended" {
		t.Fatal("appending to one decoded sandbox overwrote the next one")
	}
}

func TestInventoryCorruptRecordIsAnErrorNamingTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	db := open(t, path)
	defer db.Close()
	raw := encodeInventory(InventoryRecord{Backend: "k8s:x", Sandboxes: k8sFleet(2)})
	for cut := len(invMagic); cut < len(raw); cut += 7 {
		if _, err := decodeInventory(raw[:cut]); err == nil {
			t.Fatalf("a record cut at byte %d of %d decoded without error", cut, len(raw))
		}
	}
	if err := db.update(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketInventory).Put([]byte("k8s:x"), raw[:len(raw)/2])
	}); err != nil {
		t.Fatal(err)
	}
	_, err := db.Inventory()
	if err == nil || !strings.Contains(err.Error(), "inventory") || !strings.Contains(err.Error(), "k8s:x") {
		t.Fatalf("Inventory() of a truncated record = %v; want an error naming the bucket and backend", err)
	}
}

func FuzzDecodeInventory(f *testing.F) {
	f.Add(encodeInventory(InventoryRecord{Backend: "k8s:x", Sandboxes: k8sFleet(2)}))
	f.Add(encodeInventory(InventoryRecord{Backend: "docker:y"}))
	f.Fuzz(func(t *testing.T, raw []byte) {
		outlineAgrees(t, raw) // must never panic, and agree with the full decode
		rec, err := decodeInventory(raw)
		if err == nil {
			if _, err := decodeInventory(encodeInventory(rec)); err != nil {
				t.Fatalf("re-encoding a decoded record: %v", err)
			}
		}
	})
}

// Caches written as JSON by earlier versions still paint the first frame.
func TestInventoryReadsTheEarlierJSONLayout(t *testing.T) {
	db := open(t, filepath.Join(t.TempDir(), "state.db"))
	defer db.Close()
	want := InventoryRecord{Backend: "docker:old", Saved: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), Sandboxes: k8sFleet(2)}
	raw, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.update(func(tx *bolt.Tx) error { return tx.Bucket(bucketInventory).Put([]byte(want.Backend), raw) }); err != nil {
		t.Fatal(err)
	}
	got, err := db.Inventory()
	if err != nil || len(got) != 1 || len(got[0].Sandboxes) != 2 || got[0].Sandboxes[1].Name != want.Sandboxes[1].Name {
		t.Fatalf("Inventory() = %+v, %v", got, err)
	}
	// The next save rewrites it in the compact layout.
	if err := db.SaveInventory(got[0]); err != nil {
		t.Fatal(err)
	}
	_ = db.view(func(tx *bolt.Tx) error {
		if inventoryBody(tx.Bucket(bucketInventory).Get([]byte(want.Backend))) == nil {
			t.Error("the save after reading a JSON record did not rewrite it in the binary layout")
		}
		return nil
	})
}

func TestSavingAnUnchangedFleetKeepsTheRecord(t *testing.T) {
	db := open(t, filepath.Join(t.TempDir(), "state.db"))
	defer db.Close()
	t0 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	fleet := k8sFleet(50)
	for i, saved := range []time.Time{t0, t0.Add(time.Minute)} {
		if err := db.SaveInventory(InventoryRecord{Backend: "k8s:x", Saved: saved, Sandboxes: fleet}); err != nil {
			t.Fatalf("save %d: %v", i, err)
		}
	}
	recs, err := db.Inventory()
	if err != nil || len(recs) != 1 || !recs[0].Saved.Equal(t0) {
		t.Fatalf("after saving the same fleet twice: %+v, %v; want the first save kept", recs, err)
	}
	fleet[7].Status = sandbox.StatusPartial
	if err := db.SaveInventory(InventoryRecord{Backend: "k8s:x", Saved: t0.Add(2 * time.Minute), Sandboxes: fleet}); err != nil {
		t.Fatal(err)
	}
	recs, err = db.Inventory()
	if err != nil || !recs[0].Saved.Equal(t0.Add(2*time.Minute)) || recs[0].Sandboxes[7].Status != sandbox.StatusPartial {
		t.Fatalf("a changed fleet was not saved: %+v, %v", recs[0].Saved, err)
	}
}

// The inventory cache passes the redaction layer like every other record: a credential in a
// label (by its name or by its shape) never reaches the file, while the rest round-trips.
func TestInventoryCacheKeepsNoSecret(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	db := open(t, path)
	const byName, byShape = "hunter2-plain-value", "sk-ant-api03-" + "abcdefghijklmnopqrstuvwxyz0123456789"
	fleet := k8sFleet(3)
	fleet[1].Labels = map[string]string{"OPENAI_API_KEY": byName, "note": "Bearer " + byShape, "team": "red"}
	if err := db.SaveInventory(InventoryRecord{Backend: "k8s:x", Saved: time.Now(), Sandboxes: fleet}); err != nil {
		t.Fatal(err)
	}
	recs, err := db.Inventory()
	if err != nil || len(recs) != 1 {
		t.Fatalf("inventory %v, %v", recs, err)
	}
	got := recs[0].Sandboxes[1].Labels
	if got["team"] != "red" || got["OPENAI_API_KEY"] == byName || strings.Contains(got["note"], byShape) {
		t.Fatalf("labels after the round trip: %v", got)
	}
	db.Close()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{byName, byShape} {
		if strings.Contains(string(raw), secret) {
			t.Errorf("the state file holds %q", secret)
		}
	}
}

// A cache written before findings carried their network (testdata/inventory-v1.bin, made by
// 0b36316's encoder) is still read, whole and outlined, and is never taken for an unchanged
// body of the current layout.
func TestInventoryCodecReadsTheFirstLayout(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "inventory-v1.bin"))
	if err != nil {
		t.Fatal(err)
	}
	for _, outline := range []bool{false, true} {
		rec, err := decodeRecord(raw, outline)
		if err != nil {
			t.Fatalf("outline=%v: %v", outline, err)
		}
		if rec.Backend != "docker:local" || len(rec.Sandboxes) != 1 || rec.Sandboxes[0].Members[0].Name != "p1-default-1" {
			t.Fatalf("outline=%v: record %+v", outline, rec)
		}
		fs := rec.FindingsOf(0)
		if len(fs) != 2 || fs[0].Evidence != "network egress Internal=false" || fs[1].RuleID != "CMP-R03" || fs[0].Network != "" {
			t.Errorf("outline=%v: findings %+v", outline, fs)
		}
		if rec.WorstOf(0) != catalog.SeverityHigh {
			t.Errorf("outline=%v: worst %v", outline, rec.WorstOf(0))
		}
	}
	if inventoryBody(raw) != nil {
		t.Error("a first-layout record's body compared with the current layout's")
	}
}
