package main

import (
	"encoding/json"
	"fmt"
	"io"
)

// outputFlag validates --output values shared by list-like commands.
func checkOutput(v string, allowed ...string) error {
	for _, a := range allowed {
		if v == a {
			return nil
		}
	}
	return exitWith(2, fmt.Sprintf("--output %q: want one of %v", v, allowed))
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
