//go:build !linux

package boundary

import (
	"os"
	"time"
)

// dirStamp is empty where kin does not read a folder's times portably:
// every walk reads every folder.
type dirStamp struct{}

func stampOf(string, os.FileInfo) (dirStamp, bool) { return dirStamp{}, false }

func (dirStamp) trusted(time.Time) bool { return false }
