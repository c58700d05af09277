// Package dockerfile writes the few Dockerfile instructions rangekeeper generates for images it
// builds locally through the Engine API (the demo image, test images).
package dockerfile

import (
	"fmt"
	"sort"
)

// Label is one LABEL instruction carrying every label, in a stable order. The build API's Labels
// option would instead add one untagged intermediate image per label on the classic builder.
func Label(labels map[string]string) string {
	if len(labels) == 0 {
		return ""
	}
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	line := "LABEL"
	for _, k := range keys {
		line += fmt.Sprintf(" %q=%q", k, labels[k])
	}
	return line + "\n"
}
