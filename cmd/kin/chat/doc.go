// Package chat is kin's terminal front end: `kin chat`. It is an editor like
// any other, only line-oriented: it speaks the JSON-RPC protocol of
// rpc/PROTOCOL.md, with the real LSP framing, to a `kin serve` it starts (or
// attaches to with --connect on a loopback address), and it shows what the
// service does: the answer as it streams, each tool call and its status,
// every approval with exactly what would happen (the command and its folder,
// the full diff, or where an MCP call's arguments go), elicitation forms
// field by field, sessions, MCP servers and grants.
//
// It works at a terminal and with piped input alike. Notifications arrive on
// jsonrpc2's read loop; they are queued and handed to the one goroutine that
// draws and reads, so nothing ever blocks the connection and a question can
// interrupt a streaming answer cleanly.
//
// At a terminal the prompt is a line editor (editor.go, on
// github.com/ergochat/readline) that stays below the output: the answer
// streams above the line being typed, a question typed during a turn is
// queued, and an approval or a form takes the prompt when it comes. One
// question on the command line is a one-shot run.
//
// What it must never do:
//   - approve anything the person did not approve. Enter, n, a closed input,
//     Ctrl-C and piped input all deny; only an explicit y/a/p/t at the prompt,
//     or the --approve-all flag, allows a call, and keys typed before the
//     question appeared never answer it. Elicitations are never answered on
//     the person's behalf.
//   - print a secret. The service never sends one, and what this package
//     prints of the raw exchange (--rpc, and --trace with --connect) goes
//     through rpc.MaskSecrets; text from the model, tools and MCP servers is
//     shown with control characters escaped so it cannot drive the terminal.
//   - open a URL. URL-mode elicitations are printed for the person to open.
package chat
