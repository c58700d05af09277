package docker

import (
	"testing"

	"github.com/rangekeeper/rangekeeper/backends/docker/dockertest"
)

// TestMain sweeps every engine resource this test process labelled, even after a panic.
func TestMain(m *testing.M) { dockertest.Main(m) }
