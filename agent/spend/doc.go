// Package spend counts what model requests use, in tokens and (where the
// person gave a model's price) in money, and says when the next request
// would pass one of the person's limits (settings.json "limits"): a turn's,
// a session's or a day's. It is the arithmetic and the day's ledger; the
// agent asks the person (approval kind "limit") and never sends a request
// past a limit that nobody waived.
//
// What reaches it from others: the token counts a model service reports
// (a service may report none: kin then estimates from the bytes sent and
// received, and says so with Estimated), and the day's ledger
// $KIN_HOME/usage.json, which every kin process on the machine adds to
// under agent/lockedfile's lock. The limits and prices are the person's
// own settings; nothing a repository, a model or an MCP server sends can
// change them. A ledger kin cannot read is an error, never a zero: a
// count that restarts at zero would let a day's limit be passed.
//
// What is not covered: a request's output cannot be known before it is
// sent, so a limit is checked against what was used, what the requests on
// their way hold (their estimated input, until their usage is counted:
// subagents run side by side) and the next request's estimated input; the
// answers to the requests on their way may pass the limit by their output
// (each bounded by the model's output budget). Another kin process on the
// same KIN_HOME (another editor window) counts too: its requests once
// they are in the ledger, its requests on their way by the holds it
// records there (holds.go; a killed kin's count nothing). Prices
// are the person's; kin never looks them up or converts currencies.
package spend
