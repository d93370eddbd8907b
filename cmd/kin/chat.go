package main

import (
	"fmt"
	"io"
)

func runChat(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "kin chat: not built yet")
	return 2
}
