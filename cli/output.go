package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"sigs.k8s.io/yaml"
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

// dataFormats are the machine-readable --output values every command with -o json offers.
var dataFormats = []string{"json", "yaml"}

// isData reports whether an --output value is a machine-readable one (json or yaml).
func isData(format string) bool { return format == "json" || format == "yaml" }

// writeData is the one output path of machine-readable results: -o json writes v as indented
// JSON, -o yaml writes the same JSON document as YAML (same fields, same names, the json tags
// and omitempty rules), so the two can never carry different data. A new command with -o json
// calls writeData(f.Out, o.Output, v) and lists dataFormats in checkOutput.
func writeData(w io.Writer, format string, v any) error {
	return writeFormat(w, format, func(w io.Writer) error { return writeJSON(w, v) })
}

// writeFormat is writeData for a command whose JSON comes from its own writer (lint's and
// verify's reports): yaml converts what writeJSON writes.
func writeFormat(w io.Writer, format string, writeJSON func(io.Writer) error) error {
	if format != "yaml" {
		return writeJSON(w)
	}
	var buf bytes.Buffer
	if err := writeJSON(&buf); err != nil {
		return err
	}
	y, err := yaml.JSONToYAML(buf.Bytes())
	if err != nil {
		return fmt.Errorf("yaml output: %w", err)
	}
	_, err = w.Write(y)
	return err
}
