package main

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/kin-dev/kin/agent/visible"
)

// The listing commands (kin mcp, kin trust, kin grants) print text that a
// repository, a server or a session wrote: server names, a skill's
// description, a hook's command, a server's error message. Printed as
// written, an escape sequence in it reaches the person's terminal (OSC 52
// writes the clipboard, a cursor move rewrites the lines above, so a launch
// reads as another), and a line break forges a row. kin chat and the
// editors filter such text; these commands print it through oneLine or
// quoted.

// oneLine is free text (a description, a command, an error) on one line:
// every character that hides or reorders text escaped as agent/visible
// does for approvals, and line breaks and tabs as \n, \r and \t.
func oneLine(s string) string {
	s = visible.Escape(s) // keeps "\r\n", "\n" and "\t"
	if !strings.ContainsAny(s, "\r\n\t") {
		return s
	}
	return strings.NewReplacer("\r", `\r`, "\n", `\n`, "\t", `\t`).Replace(s)
}

// quoted is a name a person may type back (kin trust revoke trust:NAME):
// as it is when it reads as itself, else Go-quoted with escapes, as kin
// mcp list shows a server's name (unquoteName reads it back).
func quoted(s string) string {
	if s == "" {
		return `""`
	}
	if !utf8.ValidString(s) || strings.ContainsAny(s, "\"\\ \t\r\n") || visible.Escape(s) != s {
		return strconv.Quote(s)
	}
	return s
}

// unquoteName is the name a person typed as quoted showed it: a Go-quoted
// name unquoted, anything else as it is.
func unquoteName(s string) (string, bool) {
	if len(s) < 2 || s[0] != '"' {
		return s, false
	}
	u, err := strconv.Unquote(s)
	if err != nil {
		return s, false
	}
	return u, true
}
