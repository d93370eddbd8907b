package chat

import (
	"fmt"
	"strings"

	"github.com/kin-dev/kin/rpc"
)

// MCP servers' own instructions at the prompt: /mcp marks a server whose
// instructions changed since the person trusted it, /mcp instructions NAME
// shows them (with the start of their hash), and /mcp accept NAME HASH
// accepts them only when HASH starts the hash of the text kin holds now,
// so the person accepts exactly what they read. kin decides what reaches
// the model.

// hashShown is how much of an instructions hash /mcp instructions shows
// for /mcp accept.
const hashShown = 12

// mcpCommand runs /mcp and its subcommands.
func (u *ui) mcpCommand(fields []string) {
	switch {
	case len(fields) == 1:
		u.listMCP()
	case len(fields) == 3 && fields[1] == "instructions":
		u.showInstructions(fields[2])
	case len(fields) == 4 && fields[1] == "accept":
		u.acceptInstructions(fields[2], fields[3])
	default:
		u.usage("/mcp, /mcp instructions NAME, or /mcp accept NAME HASH")
	}
}

// instructionsNote is the line /mcp adds under a server whose instructions
// wait for the person ("" for any other).
func (u *ui) instructionsNote(r rpc.MCPServerRow) string {
	if !r.InstructionsPending {
		return ""
	}
	return "    " + u.scr.yellow("⚠ its instructions changed since you trusted it: withheld from the model until you accept them (/mcp instructions "+cleanLine(r.Name)+")")
}

func (u *ui) mcpRow(name string) (rpc.MCPServerRow, bool) {
	var res mcpListResult
	if err := u.call("mcp/list", struct{}{}, &res); err != nil {
		u.fail(err)
		return rpc.MCPServerRow{}, false
	}
	for _, r := range res.Servers {
		if r.Name == name {
			return r, true
		}
	}
	u.usage(fmt.Sprintf("no MCP server named %q (see /mcp)", name))
	return rpc.MCPServerRow{}, false
}

func shortHash(h string) string {
	h = strings.TrimPrefix(h, "sha256:")
	if len(h) > hashShown {
		h = h[:hashShown]
	}
	return h
}

func (u *ui) showInstructions(name string) {
	r, ok := u.mcpRow(name)
	if !ok {
		return
	}
	s := u.scr
	if r.Instructions == "" {
		s.line(s.dim("MCP server " + cleanLine(name) + " gave no instructions."))
		return
	}
	status := "accepted: sent to the model as the server's untrusted text"
	if r.InstructionsPending {
		status = s.yellow("CHANGED since you trusted it: withheld from the model until you accept them")
	}
	s.line(s.bold("MCP server "+cleanLine(name)+": instructions") + " (" + status + ")")
	for _, l := range strings.Split(strings.TrimRight(r.Instructions, "\n"), "\n") {
		s.line("  " + cleanLine(l))
	}
	if r.InstructionsPending {
		s.line(s.dim(fmt.Sprintf("Accept exactly this text with /mcp accept %s %s", cleanLine(name), shortHash(r.InstructionsHash))))
	}
}

func (u *ui) acceptInstructions(name, prefix string) {
	r, ok := u.mcpRow(name)
	if !ok {
		return
	}
	prefix = strings.TrimPrefix(prefix, "sha256:")
	if !r.InstructionsPending || len(prefix) < 8 || !strings.HasPrefix(strings.TrimPrefix(r.InstructionsHash, "sha256:"), prefix) {
		u.usage("these are not the instructions kin holds now: look at them again with /mcp instructions " + cleanLine(name))
		return
	}
	var res rpc.MCPAcceptInstructionsResult
	if err := u.call(rpc.MethodMCPAcceptInstructions, rpc.MCPAcceptInstructionsParams{Name: name, Hash: r.InstructionsHash}, &res); err != nil {
		u.fail(err)
		return
	}
	u.scr.line(u.scr.dim("Accepted: the model gets " + cleanLine(name) + "'s instructions from the next request on."))
}
