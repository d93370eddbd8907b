//go:build !unix

package boundary

import "os"

// fileID is empty where the system names no inode kin can read portably:
// the path alone names the folder.
func fileID(os.FileInfo) string { return "" }
