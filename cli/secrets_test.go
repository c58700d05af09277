package cli

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rangekeeper/rangekeeper/backends/docker/dockertest"
)

// TestNoPlantedSecretIsWrittenAnywhere plants credentials where an operator's range has them (a
// member's environment, an exec command line, a Docker host URL in the config) and hostile text
// (escape sequences, a newline, 100,000 characters), runs the real CLI through snapshot, revert,
// exec, journal and the error paths, and greps every byte it wrote: the state file, the snapshot
// directory, stdout and stderr. Zero hits.
func TestNoPlantedSecretIsWrittenAnywhere(t *testing.T) {
	t.Parallel() // see TestCrashMatrix
	dockertest.Engine(t)
	rk, probeBin := crashBinaries(t)
	secrets := []string{"sk-rkplanted0123456789abcdefXYZ", "wJalrXUtnFEMIK7MDENGbPxRfiCYRKPLANTED", "hunter2RKPLANTED", "ghp_rkplanted0123456789abcdefghijklmn"}
	project := "rk-secrets-" + dockertest.RunID
	dockertest.Project(t, project,
		dockertest.Service{Name: "default", Env: []string{"OPENAI_API_KEY=" + secrets[0], "AWS_SECRET_ACCESS_KEY=" + secrets[1], "PLAIN=visible"}},
		dockertest.Service{Name: "db", Env: []string{"DB_PASSWORD=" + secrets[2]}})
	t.Cleanup(func() { removeSnapshotImagesOf(dockertest.Engine(t), project) })
	dir := t.TempDir()
	cfg := filepath.Join(dir, "rangekeeper", "config.yaml")
	if err := os.MkdirAll(filepath.Dir(cfg), 0o700); err != nil {
		t.Fatal(err)
	}
	writeFile(t, cfg, "docker:\n  - name: local\n  - host: tcp://admin:"+secrets[2]+"@127.0.0.1:9\n")
	c := child{bin: rk, probe: probeBin, state: filepath.Join(dir, "state", "state.db"), lockDir: filepath.Join(dir, "locks"), home: dir}
	var written bytes.Buffer
	step := func(wantCode int, args ...string) string {
		out, errOut, code := c.run(t, "", args...)
		written.WriteString(out + errOut)
		if wantCode >= 0 && code != wantCode {
			t.Fatalf("%v: exit %d, want %d\n%s%s", args, code, wantCode, out, errOut)
		}
		return out + errOut
	}
	id := "docker:local/" + project
	step(0, "snapshot", id, "--name", "ok-name")
	if out := step(2, "snapshot", id, "--name", "evil\x1b[2J\nID  FAKE ROW"); !strings.Contains(out, "name") {
		t.Errorf("hostile snapshot name: %s", out)
	}
	step(0, "exec", id, "--member", "default", "--", "sh", "-c", "true Authorization: Bearer "+secrets[0]+" --password "+secrets[2]+" "+secrets[3])
	step(0, "revert", "--yes", id, "ok-name")
	out := step(0, "exec", id, "--member", "default", "--", "sh", "-c", "test \"$OPENAI_API_KEY\" = \""+secrets[0]+"\" && echo env-restored")
	if !strings.Contains(out, "env-restored") {
		t.Errorf("revert did not restore the environment from the snapshot image: %q", out)
	}
	step(0, "snapshots", "ls", id)
	step(0, "journal", "-o", "json")
	step(0, "journal")
	step(-1, "snapshots", "ls", strings.Repeat("n", 100000))
	step(0, "teardown", "--yes", id)
	if len(written.String()) > 1<<20 {
		t.Errorf("the CLI wrote %d bytes: a 100,000-character name was echoed", written.Len())
	}
	var files []string
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && !strings.HasPrefix(p, filepath.Dir(cfg)) {
			files = append(files, p)
		}
		return nil
	})
	hits := 0
	for _, s := range secrets {
		if bytes.Contains(written.Bytes(), []byte(s)) {
			hits++
			t.Errorf("secret %q… in stdout/stderr", s[:6])
		}
		for _, f := range files {
			raw, _ := os.ReadFile(f)
			if bytes.Contains(raw, []byte(s)) {
				hits++
				t.Errorf("secret %q… in %s", s[:6], f)
			}
		}
	}
	if bytes.Contains(written.Bytes(), []byte("\x1b[2J")) {
		t.Errorf("an escape sequence reached the terminal")
	}
	t.Logf("grepped %d bytes of output and %d files (%v) for %d planted secrets: %d hits", written.Len(), len(files), files, len(secrets), hits)
}
