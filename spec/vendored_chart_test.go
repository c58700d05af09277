package spec

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// The linter embeds the agent-env chart's schema and defaults; the Kubernetes tests install the
// vendored chart itself. Both must be the same chart version.
func TestEmbeddedChartFilesMatchVendoredChart(t *testing.T) {
	chart := filepath.Join("..", "backends", "kubernetes", "testdata", "agent-env", "chart")
	for file, embedded := range map[string][]byte{"values.schema.json": agentEnvSchema, "values.yaml": agentEnvDefaults} {
		vendored, err := os.ReadFile(filepath.Join(chart, file))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(vendored, embedded) {
			t.Errorf("spec's embedded %s differs from the vendored chart's: copy %s over spec/agent-env.%s", file, filepath.Join(chart, file), file)
		}
	}
}
