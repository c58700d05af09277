package cli

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/rangekeeper/rangekeeper/internal/redact"
	"github.com/rangekeeper/rangekeeper/spec"
	"github.com/rangekeeper/rangekeeper/spec/report"
)

// skipDirs are never walked: version control and vendored trees hold no specs of the project's.
var skipDirs = map[string]bool{".git": true, "vendor": true, "node_modules": true, ".venv": true}

// expandLintArgs turns the command line into the files to lint: a file as given, a directory
// walked for spec files (in lexical order). A directory without any is refused, so a typo in a
// CI path cannot pass as clean.
// walked holds the files only a walk found (not named on the command line).
func expandLintArgs(args []string, rootFlag string) (files []string, walked map[string]bool, refused []report.Refusal) {
	named := map[string]bool{}
	walked = map[string]bool{}
	for _, arg := range args {
		st, err := os.Stat(arg)
		if err != nil || !st.IsDir() {
			files = append(files, arg) // LintFile names what is wrong with it
			named[absKey(arg)] = true
			continue
		}
		shown := spec.Options{Root: lintRoot(rootFlag, filepath.Join(arg, "x"))}
		var found []string
		werr := filepath.WalkDir(arg, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				refused = append(refused, report.Refusal{File: shown.DisplayName(p), Message: redact.Message(bareError(err))})
				if d != nil && d.IsDir() {
					return fs.SkipDir
				}
				return nil
			}
			if d.IsDir() {
				if p != arg && skipDirs[d.Name()] {
					return fs.SkipDir
				}
				return nil
			}
			if spec.IsSpecName(d.Name()) {
				found = append(found, p)
			}
			return nil
		})
		if werr != nil {
			refused = append(refused, report.Refusal{File: shown.DisplayName(arg), Message: redact.Message(bareError(werr))})
		}
		if len(found) == 0 && werr == nil {
			refused = append(refused, report.Refusal{File: shown.DisplayName(arg), Message: "no spec files in this directory (*compose*.yaml, *values.yaml, helm-values.yaml, *.fw, <vmid>.conf, *proxmox*.yaml)"})
		}
		sort.Strings(found)
		for _, p := range found {
			walked[absKey(p)] = true
		}
		files = append(files, found...)
	}
	for k := range named {
		delete(walked, k)
	}
	return dedupe(files), walked, refused
}

func absKey(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

// dedupe drops a file named twice (given, and found again by a walk), keeping the first.
func dedupe(files []string) []string {
	seen := map[string]bool{}
	out := files[:0:0]
	for _, f := range files {
		if key := absKey(f); !seen[key] {
			seen[key] = true
			out = append(out, f)
		}
	}
	return out
}

// lintAll lints every file the arguments name, each with its own project root and variables
// (the .env beside it), and collects what it could not judge.
func lintAll(f *factory, o *lintOptions, opts spec.Options) (results []spec.Result, refused []report.Refusal, fragments []report.Fragment) {
	files, walked, refused := expandLintArgs(o.Files, o.Root)
	shown := map[string]string{} // display name → path, for the files a walk found
	for _, path := range files {
		fo := opts
		fo.Root = lintRoot(o.Root, path)
		env, err := composeEnv(path, o.EnvFiles, f.Environ(), o.Set)
		if err != nil {
			r := report.Refusal{File: fo.DisplayName(path), Message: redact.Message(err.Error())}
			var ee *spec.EnvFileError
			if errors.As(err, &ee) {
				r = report.Refusal{File: fo.DisplayName(ee.File), Message: redact.Message(ee.Flag + " " + ee.Err.Error())}
			}
			refused = append(refused, r)
			continue
		}
		fo.Env = env
		if walked[absKey(path)] {
			shown[fo.DisplayName(path)] = path
		}
		res, err := spec.LintFile(path, fo)
		if err != nil {
			refused = append(refused, refusal(fo.DisplayName(path), err))
			continue
		}
		results = append(results, res)
	}
	return setAsideFragments(results, refused, shown)
}

// setAsideFragments takes out of a batch the walked files that another linted spec includes
// or extends: lint judged them through that spec, where the agent is known, and judging them
// alone would guess it (a cve-bench target fragment's first service taken for the agent).
// Files named on the command line are always judged on their own.
func setAsideFragments(results []spec.Result, refused []report.Refusal, walked map[string]string) ([]spec.Result, []report.Refusal, []report.Fragment) {
	includedBy := map[string]string{}
	for _, r := range results {
		for _, inc := range r.Includes {
			if _, ok := walked[inc]; ok && inc != r.File && includedBy[inc] == "" {
				includedBy[inc] = r.File
			}
		}
	}
	if len(includedBy) == 0 {
		return results, refused, nil
	}
	var fragments []report.Fragment
	results = setAside(results, func(r spec.Result) string { return r.File }, includedBy, &fragments)
	refused = setAside(refused, func(r report.Refusal) string { return r.File }, includedBy, &fragments)
	sort.Slice(fragments, func(i, j int) bool { return fragments[i].File < fragments[j].File })
	return results, refused, fragments
}

// setAside keeps the items whose file no spec includes and records the others as fragments.
func setAside[T any](items []T, file func(T) string, includedBy map[string]string, fragments *[]report.Fragment) []T {
	keep := items[:0]
	for _, it := range items {
		if by, ok := includedBy[file(it)]; ok {
			*fragments = append(*fragments, report.Fragment{File: file(it), IncludedBy: by})
			continue
		}
		keep = append(keep, it)
	}
	return keep
}

// lintRoot is the project root for a spec: --root, else the repository holding it, else the
// current directory.
func lintRoot(flag, path string) string {
	if flag != "" {
		return flag
	}
	if r := spec.FindRoot(path); r != "" {
		return r
	}
	if wd, err := os.Getwd(); err == nil {
		return wd
	}
	return ""
}

// refusal is the report entry for a file lint could not judge, at the line it names.
func refusal(file string, err error) report.Refusal {
	var ie *spec.InputError
	if errors.As(err, &ie) {
		return report.Refusal{File: ie.File, Line: ie.Line, Column: ie.Column, Message: redact.Message(ie.Msg)}
	}
	return report.Refusal{File: file, Message: redact.Message(err.Error())}
}

// bareError drops the path an *fs.PathError repeats (the entry names the file).
func bareError(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}
