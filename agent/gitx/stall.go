package gitx

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// ErrWaitsOnFIFO is git stopped because a file it reads is a FIFO (or a
// device): git opens .gitignore, .gitattributes, .gitmodules and its own
// folder's files (config, HEAD, the index, info/exclude...) as they are,
// and open(2) of a FIFO waits for a writer for good. A repository may
// bring one, and a session's command may make one in its worktree; kin's
// request would wait until its timeout (minutes) and never say why.
var ErrWaitsOnFIFO = errors.New("is a FIFO (a named pipe) or a device, not a file, and git waits on it for good: remove it")

// stallAfter is how long git runs before kin looks whether it waits on
// such a file, and then again after twice as long each time: a git that
// finishes sooner costs nothing; where git cannot be looked into, a slow
// one in a large repository costs a walk now and then.
var stallAfter = 2 * time.Second

// run runs cmd and waits for it; while it runs longer than stallAfter,
// kin looks whether git waits on a FIFO or device for good, and stops
// git, naming the file. Only a git asleep opening or reading one is
// stopped (blockedOn): a slow git, in a large repository or reading a
// slow stdin, runs on, whatever files lie around. Where git cannot be
// looked into, a file it may wait on (stalled) is taken for one it does.
func run(cmd *exec.Cmd) error {
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	for wait := stallAfter; ; wait *= 2 {
		t := time.NewTimer(wait)
		select {
		case err := <-done:
			t.Stop()
			return err
		case <-t.C:
		}
		p, known := blockedOn(cmd.Process.Pid)
		if !known {
			// the look runs beside git: in a large work tree it takes a
			// while, and a git that ends meanwhile is answered at once
			found, stop := make(chan string, 1), make(chan struct{})
			go func() { found <- stalled(cmd.Dir, stop) }()
			select {
			case err := <-done:
				close(stop)
				return err
			case p = <-found:
			}
		}
		if p == "" {
			continue // slow, not stuck
		}
		select {
		case err := <-done: // it ended after all
			return err
		default:
		}
		_ = kill(cmd)
		<-done
		return fmt.Errorf("%s %w", p, ErrWaitsOnFIFO)
	}
}

// gitNames are the files of a work tree git opens: a FIFO of one of
// these names anywhere in it may be waited on.
var gitNames = map[string]bool{".gitignore": true, ".gitattributes": true, ".gitmodules": true, ".mailmap": true}

// stalled is the first file git may be waiting on for good in the
// repository dir is in: a FIFO or device named like gitNames in its work
// tree, anywhere in its git folder and common git folder, or a file their
// configuration includes (include.path, includeIf.*.path: git reads each
// one at the start of every command) or names as its excludes or
// attributes file. "" when there is none, or stop was
// closed. It opens no file but a linked worktree's .git and commondir and
// the configuration, each without waiting, and reads folders.
func stalled(dir string, stop <-chan struct{}) string {
	top := dir
	for {
		if _, err := os.Lstat(filepath.Join(top, ".git")); err == nil {
			break
		}
		up := filepath.Dir(top)
		if up == top {
			top = dir
			break
		}
		// the folders above dir hold .gitignore files git reads too
		if p := special(up, gitNames); p != "" {
			return p
		}
		top = up
	}
	top = realPath(top) // a symlink as the root of a walk is not followed
	found := ""
	_ = filepath.WalkDir(top, func(p string, d fs.DirEntry, err error) error {
		if stopped(stop) {
			return filepath.SkipAll
		}
		if err != nil {
			return nil
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if gitNames[d.Name()] && irregular(p, d) {
			found = p
			return filepath.SkipAll
		}
		return nil
	})
	if found != "" {
		return found
	}
	for _, gd := range gitFolders(top) {
		for _, cfg := range []string{"config", "config.worktree"} {
			for _, p := range configured(filepath.Join(gd, cfg), top) {
				if fi, err := os.Stat(p); err == nil && irregular(p, fs.FileInfoToDirEntry(fi)) {
					return p
				}
			}
		}
		_ = filepath.WalkDir(gd, func(p string, d fs.DirEntry, err error) error {
			if stopped(stop) {
				return filepath.SkipAll
			}
			if err == nil && irregular(p, d) {
				found = p
				return filepath.SkipAll
			}
			return nil
		})
		if found != "" {
			return found
		}
	}
	return ""
}

// stopped reports whether stop was closed: git ended, the look is moot.
func stopped(stop <-chan struct{}) bool {
	select {
	case <-stop:
		return true
	default:
		return false
	}
}

// special is the first entry of dir named in names that is irregular.
func special(dir string, names map[string]bool) string {
	for n := range names {
		p := filepath.Join(dir, n)
		if fi, err := os.Lstat(p); err == nil && irregular(p, fs.FileInfoToDirEntry(fi)) {
			return p
		}
	}
	return ""
}

// irregular reports whether d is a FIFO or device, itself or through a
// symlink (git follows some): what open(2) may wait on. A socket's open
// fails at once.
func irregular(p string, d fs.DirEntry) bool {
	const waits = fs.ModeNamedPipe | fs.ModeDevice | fs.ModeCharDevice
	if d.Type()&fs.ModeSymlink != 0 {
		fi, err := os.Stat(p)
		return err == nil && fi.Mode()&waits != 0
	}
	return d.Type()&waits != 0
}

// gitFolders are the git folder of the work tree top and its common
// folder (a linked worktree's is its repository's .git), as the .git
// entry and commondir file name them.
func gitFolders(top string) []string {
	gd := filepath.Join(top, ".git")
	if fi, err := os.Stat(gd); err == nil && !fi.IsDir() {
		s, ok := smallFile(gd)
		if !ok || len(s) < len("gitdir: ") || s[:len("gitdir: ")] != "gitdir: " {
			return nil
		}
		gd = s[len("gitdir: "):]
		if !filepath.IsAbs(gd) {
			gd = filepath.Join(top, gd)
		}
	}
	out := []string{gd}
	if c, ok := pathIn(filepath.Join(gd, "commondir"), gd); ok && filepath.Clean(c) != filepath.Clean(gd) {
		out = append(out, c)
	}
	return out
}

// configured are the files a git configuration file names for git to
// open as they are: with a "path" key (include.path, includeIf.<condition>.path;
// a path key of another section names a folder or nothing, which is never
// irregular) relative to the file's folder, and its excludes and
// attributes files (core.excludesFile, core.attributesFile: status,
// ls-files, add and diff open them) relative to the work tree top, where
// git runs; "~/" from HOME, as git resolves them. Only the file's own,
// not what its includes name in turn. A key of that name in another
// section costs a look at a path, nothing more.
func configured(cfg, top string) []string {
	const max = 1 << 20
	f, err := os.OpenFile(cfg, os.O_RDONLY|openNoWait, 0)
	if err != nil {
		return nil
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	b, err := io.ReadAll(io.LimitReader(f, max))
	if err != nil {
		return nil
	}
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), "=")
		k = strings.ToLower(strings.TrimSpace(k))
		base := filepath.Dir(cfg)
		switch {
		case !ok:
			continue
		case k == "excludesfile" || k == "attributesfile":
			base = top
		case k != "path":
			continue
		}
		v = strings.Trim(strings.TrimSpace(v), `"`)
		switch {
		case v == "":
			continue
		case strings.HasPrefix(v, "~/"):
			home, err := os.UserHomeDir()
			if err != nil {
				continue
			}
			v = filepath.Join(home, v[2:])
		case !filepath.IsAbs(v):
			v = filepath.Join(base, v)
		}
		out = append(out, v)
	}
	return out
}
