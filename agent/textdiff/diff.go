// Package textdiff computes unified diffs of text, the way kin shows file
// changes (approvals, tool cards, undo conflicts). It is a leaf: it knows
// nothing of files, tools or sessions.
package textdiff

import (
	"fmt"
	"strings"
)

// diffContext is how many unchanged lines surround each change.
const diffContext = 3

// Unified returns the unified diff between oldText and newText, with
// diffContext lines of context, "--- oldName" / "+++ newName" headers and
// "\ No newline at end of file" markers. It is "" when the texts are equal.
// Lines are compared with Myers' O(ND) algorithm in its linear-space form,
// so the diff is minimal (except on pathological inputs, see maxDiffCost).
func Unified(oldName, newName, oldText, newText string) string {
	if oldText == newText {
		return ""
	}
	a, b := Lines(oldText), Lines(newText)
	ops := diffLines(a, b)

	var sb strings.Builder
	fmt.Fprintf(&sb, "--- %s\n+++ %s\n", oldName, newName)
	for i := 0; i < len(ops); {
		for i < len(ops) && ops[i].kind == ' ' {
			i++
		}
		if i == len(ops) {
			break
		}
		start := max(0, i-diffContext)
		last := i // last change in this hunk
		for j := i; j < len(ops); {
			if ops[j].kind != ' ' {
				last = j
				j++
				continue
			}
			k := j
			for k < len(ops) && ops[k].kind == ' ' {
				k++
			}
			if k == len(ops) || k-j > 2*diffContext {
				break
			}
			j = k
		}
		end := min(len(ops), last+1+diffContext)
		writeHunk(&sb, ops[start:end], a, b)
		i = end
	}
	return sb.String()
}

func writeHunk(sb *strings.Builder, ops []diffOp, a, b []string) {
	aStart, bStart := ops[0].a, ops[0].b
	aCount, bCount := 0, 0
	for _, op := range ops {
		if op.kind != '+' {
			aCount++
		}
		if op.kind != '-' {
			bCount++
		}
	}
	fmt.Fprintf(sb, "@@ -%s +%s @@\n", hunkRange(aStart, aCount), hunkRange(bStart, bCount))
	for _, op := range ops {
		line := ""
		switch op.kind {
		case '-':
			line = a[op.a]
		default:
			line = b[op.b]
		}
		sb.WriteByte(op.kind)
		sb.WriteString(line)
		if !strings.HasSuffix(line, "\n") {
			sb.WriteString("\n\\ No newline at end of file\n")
		}
	}
}

// hunkRange formats a hunk's start (0-based) and length the way GNU diff
// and git do: "l,n", "l" when n is 1, and the line before when n is 0.
func hunkRange(start, n int) string {
	switch n {
	case 0:
		return fmt.Sprintf("%d,0", start)
	case 1:
		return fmt.Sprintf("%d", start+1)
	}
	return fmt.Sprintf("%d,%d", start+1, n)
}

// Lines splits s after each "\n"; the last line may lack one.
func Lines(s string) []string {
	if s == "" {
		return nil
	}
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// diffOp is one line of an edit script: ' ' keeps a[a] (= b[b]), '-'
// deletes a[a], '+' inserts b[b]. For '-' b is the position in b, for '+'
// a is the position in a.
type diffOp struct {
	kind byte
	a, b int
}

// diffLines returns the edit script turning a into b.
func diffLines(a, b []string) []diffOp {
	ids := make(map[string]int, len(a)+len(b))
	id := func(lines []string) []int {
		out := make([]int, len(lines))
		for i, l := range lines {
			v, ok := ids[l]
			if !ok {
				v = len(ids)
				ids[l] = v
			}
			out[i] = v
		}
		return out
	}
	d := &differ{a: id(a), b: id(b)}
	d.del = make([]bool, len(a))
	d.ins = make([]bool, len(b))
	d.compare(0, 0, len(a), len(b))

	ops := make([]diffOp, 0, max(len(a), len(b)))
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && d.del[i]:
			ops = append(ops, diffOp{'-', i, j})
			i++
		case j < len(b) && d.ins[j]:
			ops = append(ops, diffOp{'+', i, j})
			j++
		default:
			ops = append(ops, diffOp{' ', i, j})
			i++
			j++
		}
	}
	return ops
}

// maxDiffCost bounds the edit distance the middle-snake search explores in
// one box before it settles for a non-minimal split (the furthest point its
// forward search reached, as GNU diff does when a diff gets expensive), so a
// diff of two large, wholly different files stays fast: the cost is then
// about D × maxDiffCost instead of (N+M) × D.
const maxDiffCost = 1024

type differ struct {
	a, b     []int
	del, ins []bool
	vf, vb   []int
}

// compare marks the deletions and insertions turning a[l:r] into b[t:bt].
func (d *differ) compare(l, t, r, bt int) {
	for l < r && t < bt && d.a[l] == d.b[t] {
		l++
		t++
	}
	for l < r && t < bt && d.a[r-1] == d.b[bt-1] {
		r--
		bt--
	}
	switch {
	case l == r:
		for j := t; j < bt; j++ {
			d.ins[j] = true
		}
		return
	case t == bt:
		for i := l; i < r; i++ {
			d.del[i] = true
		}
		return
	}
	// Both sides are non-empty and differ at both ends, so the edit
	// distance is at least 2 and every part below is a smaller box.
	sx, sy, fx, fy := d.midSnake(l, t, r, bt)
	d.compare(l, t, sx, sy)
	d.compare(sx, sy, fx, fy)
	d.compare(fx, fy, r, bt)
}

// midSnake finds the middle snake of an optimal path through the box
// a[l:r] × b[t:bt] (Myers 1986, section 4b): its start (sx, sy) and finish
// (fx, fy). Past maxDiffCost it returns a split point instead (start =
// finish) that some path reaches within maxDiffCost edits.
func (d *differ) midSnake(l, t, r, bt int) (sx, sy, fx, fy int) {
	w, h := r-l, bt-t
	delta := w - h
	limit := (w + h + 1) / 2
	off := limit + 1
	if n := 2*limit + 3; cap(d.vf) < n {
		d.vf = make([]int, n)
		d.vb = make([]int, n)
	} else {
		d.vf = d.vf[:n]
		d.vb = d.vb[:n]
	}
	vf, vb := d.vf, d.vb
	vf[off+1] = l  // x on diagonal k (x - l - (y - t))
	vb[off+1] = bt // y on diagonal c (k - delta), searching backwards
	for D := 0; D <= limit; D++ {
		if D > maxDiffCost {
			x, y := d.furthest(l, t, r, bt, D-1, off)
			return x, y, x, y
		}
		// forward
		for k := D; k >= -D; k -= 2 {
			var x, px int
			if k == -D || (k != D && vf[off+k-1] < vf[off+k+1]) {
				x = vf[off+k+1]
				px = x
			} else {
				px = vf[off+k-1]
				x = px + 1
			}
			y := t + (x - l) - k
			py := y
			if D != 0 && x == px {
				py = y - 1
			}
			for x < r && y < bt && d.a[x] == d.b[y] {
				x++
				y++
			}
			vf[off+k] = x
			c := k - delta
			if delta%2 != 0 && c >= -(D-1) && c <= D-1 && y >= vb[off+c] {
				return px, py, x, y
			}
		}
		// backward
		for c := D; c >= -D; c -= 2 {
			var y, py int
			if c == -D || (c != D && vb[off+c-1] > vb[off+c+1]) {
				y = vb[off+c+1]
				py = y
			} else {
				py = vb[off+c-1]
				y = py - 1
			}
			k := c + delta
			x := l + (y - t) + k
			px := x
			if D != 0 && y == py {
				px = x + 1
			}
			for x > l && y > t && d.a[x-1] == d.b[y-1] {
				x--
				y--
			}
			vb[off+c] = y
			if delta%2 == 0 && k >= -D && k <= D && x <= vf[off+k] {
				return x, y, px, py
			}
		}
	}
	// unreachable: an optimal path has at most w+h edits
	return l + w/2, t + h/2, l + w/2, t + h/2
}

// furthest returns the point furthest along any diagonal the forward search
// reached with D edits, inside the box and short of its end; the box centre
// when there is none. Either splits the box into two smaller ones.
func (d *differ) furthest(l, t, r, bt, D, off int) (int, int) {
	bx, by := -1, -1
	for k := -D; k <= D; k += 2 {
		x := d.vf[off+k]
		y := t + (x - l) - k
		if x <= r && y <= bt && (x != r || y != bt) && (x-l)+(y-t) > 0 && x+y > bx+by {
			bx, by = x, y
		}
	}
	if bx < 0 {
		return l + (r-l)/2, t + (bt-t)/2
	}
	return bx, by
}
