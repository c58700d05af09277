// Package facts collects a sandbox's isolation posture from inside it, read-only: it reads
// procfs, sysfs and well-known files, tests writability with access(2) and never writes, and
// opens sockets only to targets the operator configured.
package facts
