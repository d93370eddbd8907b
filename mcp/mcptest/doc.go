// Package mcptest provides MCP servers for tests: well-behaved in-process
// go-sdk servers (over streamable HTTP on httptest), a scripted raw JSON-RPC
// server that misbehaves on purpose (huge replies, slow replies, cursor
// loops, redirects), and stdio servers that run as a re-executed test binary
// (see Main).
//
// It is test support only: nothing outside _test files and benchmarks may
// import it, and it must never contact anything but loopback addresses.
package mcptest
