// Command rangekeeper is the terminal workbench for operators of AI cyber-evaluation ranges.

// The runtime would re-read the cgroup's CPU limit every second to adjust GOMAXPROCS: a wake-up
// a second for an interactive tool that idles most of its life. The limit in force at start is
// still honoured.
//
//go:debug updatemaxprocs=0
package main

import (
	"os"

	"github.com/rangekeeper/rangekeeper/cli"
)

func main() { os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }
