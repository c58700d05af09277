// Package probe delivers the static rangekeeper-probe binary into a sandbox member through the
// backend's copy and exec capabilities, runs it, collects its report and removes it, and keeps
// the history of results; verdicts per escape class live in probe/verdict.
package probe
