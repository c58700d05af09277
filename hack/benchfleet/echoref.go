package main

import (
	"fmt"
	"os"

	"golang.org/x/term"
)

// echoRefArg runs this binary as the reference program of the keys phase.
const echoRefArg = "echo-ref"

// Its two screens: each byte read flips between them at once (no frame rate, no model).
const (
	refShut = "echo-ref shut"
	refOpen = "echo-ref open"
)

// echoRef is the floor of key-to-frame through the terminal path: it answers each key with a
// write as soon as it is read. Timed beside the tool, under the same load, it shows how much of
// the tool's figure is tmux, the pseudo-terminal and the capture rather than the tool.
func echoRef() error {
	old, err := term.MakeRaw(int(os.Stdin.Fd()))
	if err != nil {
		return err
	}
	defer term.Restore(int(os.Stdin.Fd()), old) //nolint:errcheck
	open := false
	show := func() error {
		s := refShut
		if open {
			s = refOpen
		}
		_, err := fmt.Fprintf(os.Stdout, "\x1b[H\x1b[2J%s", s)
		return err
	}
	if err := show(); err != nil {
		return err
	}
	buf := make([]byte, 64)
	for {
		n, err := os.Stdin.Read(buf)
		if err != nil {
			return err
		}
		for range n {
			open = !open
		}
		if err := show(); err != nil {
			return err
		}
	}
}
