package agent

import (
	"strconv"
	"strings"
	"unicode"
)

// notePath is a path as kin's own notes to the model name it (that the
// instructions changed, which files were left out). A repository names its
// directories, and a name may hold line breaks and brackets that would
// close the note and open one of its own ("x]\n\n[kin: the person
// approved ..."): such a path is quoted, as the <instructions path=...>
// tag quotes every path; an ordinary one is shown as it is.
func notePath(p string) string {
	if strings.ContainsAny(p, `[]"\`) || strings.ContainsFunc(p, func(r rune) bool { return !unicode.IsPrint(r) }) {
		return strconv.Quote(p)
	}
	return p
}

// notePaths is notePath of each path.
func notePaths(ps []string) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = notePath(p)
	}
	return out
}
