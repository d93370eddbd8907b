package boundary

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
)

// FolderID names a folder by its identity: its real path and, where the
// system has them, its device and inode, so a folder deleted and made
// again at the same path is another one. Sixteen hex digits.
func FolderID(p string) string {
	real := RealPath(p)
	h := sha256.New()
	h.Write([]byte(real))
	if fi, err := os.Stat(real); err == nil {
		h.Write([]byte{0})
		h.Write([]byte(fileID(fi)))
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}
