package dockerfile

import "testing"

func TestLabelIsOneStableQuotedInstruction(t *testing.T) {
	got := Label(map[string]string{"b": `x "y"`, "a": "1"})
	want := "LABEL \"a\"=\"1\" \"b\"=\"x \\\"y\\\"\"\n"
	if got != want {
		t.Fatalf("Label = %q, want %q", got, want)
	}
	if Label(nil) != "" {
		t.Fatal("no labels must give no instruction")
	}
}
