//go:build linux

package boundary

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// ScrubEnviron overwrites the values of the named variables in this
// process's original environment block, the one /proc/<pid>/environ
// shows to every process of the same user: kin's model keys then cannot
// be read from there by a command kin runs unconfined (cat
// /proc/$PPID/environ). The Go runtime keeps its own copy, so os.Getenv
// still answers. It reports the variables it erased.
func ScrubEnviron(names []string) ([]string, error) {
	stat, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return nil, err
	}
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return nil, fmt.Errorf("unexpected /proc/self/stat")
	}
	f := strings.Fields(string(stat[i+1:])) // field 3 (state) first
	if len(f) < 49 {
		return nil, fmt.Errorf("/proc/self/stat has no environment bounds")
	}
	start, err1 := strconv.ParseInt(f[47], 10, 64) // field 50: env_start
	end, err2 := strconv.ParseInt(f[48], 10, 64)   // field 51: env_end
	if err1 != nil || err2 != nil || end <= start || end-start > 16<<20 {
		return nil, fmt.Errorf("unexpected environment bounds in /proc/self/stat")
	}
	mem, err := os.OpenFile("/proc/self/mem", os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	defer mem.Close()
	block := make([]byte, end-start)
	if _, err := mem.ReadAt(block, start); err != nil {
		return nil, err
	}
	var erased []string
	off := 0
	for _, kv := range bytes.Split(block, []byte{0}) {
		name, _, ok := bytes.Cut(kv, []byte("="))
		if ok {
			for _, n := range names {
				if string(name) == n {
					for j := off + len(name) + 1; j < off+len(kv); j++ {
						block[j] = 0
					}
					erased = append(erased, n)
				}
			}
		}
		off += len(kv) + 1
	}
	if len(erased) == 0 {
		return nil, nil
	}
	if _, err := mem.WriteAt(block, start); err != nil {
		return nil, err
	}
	return erased, nil
}
