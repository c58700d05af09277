package author

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/rangekeeper/rangekeeper/spec"
	"github.com/rangekeeper/rangekeeper/state"
)

type (
	lintTickMsg struct{ seq int }
	lintDoneMsg struct {
		seq      int
		res      spec.Result
		err      error
		draftErr error
	}
	fileLoadedMsg struct {
		file *openFile
		err  error
	}
	fileExistsMsg  struct{ path string }
	fileWrittenMsg struct {
		path string
		err  error
	}
)

// lintCmd lints the content and keeps it as a draft, off the UI goroutine.
func lintCmd(seq int, name, content string, format spec.Format, opts Options) tea.Cmd {
	return func() tea.Msg {
		lo := opts.Lint
		lo.Format = format
		res, err := spec.LintBytes(name, []byte(content), lo)
		var draftErr error
		if opts.Drafts != nil {
			draftErr = opts.Drafts.PutDraft(state.Draft{Name: opts.DraftName, Format: string(format), Content: content, Target: name, Updated: time.Now().UTC()})
		}
		if opts.Observe != nil {
			opts.Observe(res, err)
		}
		return lintDoneMsg{seq: seq, res: res, err: err, draftErr: draftErr}
	}
}

func loadFile(path string) tea.Cmd {
	return func() tea.Msg {
		data, err := os.ReadFile(path)
		if err != nil {
			return fileLoadedMsg{err: err}
		}
		res, err := spec.LintBytes(path, data, spec.Options{})
		if err != nil {
			return fileLoadedMsg{err: err}
		}
		return fileLoadedMsg{file: &openFile{path: path, data: data, format: res.Format}}
	}
}

// writeFile writes content to path. Without overwrite it refuses an existing file (O_EXCL, so
// no check-then-write race) and reports it so the screen can ask; with overwrite it replaces the
// file atomically through a temporary file in the same directory.
func writeFile(path, content string, overwrite bool) tea.Cmd {
	return func() tea.Msg {
		if !overwrite {
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
			if errors.Is(err, fs.ErrExist) {
				return fileExistsMsg{path: path}
			}
			if err != nil {
				return fileWrittenMsg{path: path, err: err}
			}
			_, err = f.WriteString(content)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			return fileWrittenMsg{path: path, err: err}
		}
		tmp, err := os.CreateTemp(filepath.Dir(path), ".rangekeeper-*.tmp")
		if err != nil {
			return fileWrittenMsg{path: path, err: err}
		}
		_, err = tmp.WriteString(content)
		if cerr := tmp.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			if st, serr := os.Stat(path); serr == nil {
				_ = os.Chmod(tmp.Name(), st.Mode().Perm())
			}
			err = os.Rename(tmp.Name(), path)
		}
		if err != nil {
			os.Remove(tmp.Name())
		}
		return fileWrittenMsg{path: path, err: err}
	}
}

// The state file is the draft store the fleet view passes in.
var _ DraftStore = (*state.DB)(nil)
