// Package inspectlive links live sandboxes to the Inspect samples running in them and reads
// those samples' progress, from the files an Inspect eval process keeps in its data directory:
// the realtime sample-buffer database, the trace file, the control discovery file and the .eval
// log. It serves the workbench, the CLI and the daemon alike; it shows, it never acts.
//
// One Watcher serves every reader:
//
//	w := inspectlive.New(inspectlive.Config{LogDirs: []string{"./logs"}})
//	w.Start()
//	defer w.Close()
//	for {
//		<-w.Changed()                // redraw: the snapshot moved
//		for _, sb := range sandboxes {
//			l := w.Link(sb)          // eval, sample and how sure (exact, matched, trace, guessed, unknown)
//			s, _ := w.Sample(l.Eval.Key, l.SampleID, l.Epoch)
//			_ = s                    // status, tokens, score, errors, limits, the in-flight command
//		}
//	}
//
// Sources, by subpackage: buffer (the SQLite sample buffer, read-only), trace (the JSONL trace
// that ties a Docker compose project to its sample) and evallog (the .eval zip, for samples
// already flushed out of the buffer).
package inspectlive
