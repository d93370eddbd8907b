// Package modeltest is a scripted stand-in for a model service speaking the
// OpenAI Responses API, for kin's tests only. It is never a real service and
// must not be used outside tests and local test tooling.
//
// A [Server] answers POST /v1/responses (and /responses) with the same
// server-sent event sequence the OpenAI API streams: response.created,
// response.in_progress, the output item, content part, text delta and
// function-call argument events, and finally response.completed (or
// response.failed); a Reply's reasoning items stream first, with their
// summary deltas and, when the request includes it, encrypted content. The
// same replies answer POST /v1/chat/completions as Chat Completions chunks.
// Like the API, the server refuses input it cannot take (a reasoning item
// without encrypted content while store is off, an output without its call)
// and, after [Server.RefuseParams], parameters a service without them
// refuses. Each request consumes the next [Reply] queued with
// [Server.Script]; a Reply can also script a refusal, replay a response
// recorded from a real service (agent/model/testdata) split at any byte,
// script HTTP errors (with Retry-After,
// or a proxy's HTML page for a body), dropped connections, missing terminal
// events, malformed and over-long events, slow streams, streams held open
// until a test releases them, and a service that stalls for good before its
// headers, after them or mid-stream.
//
// For out-of-process use (a spawned "kin serve" talking to a separately
// running mock) the server can instead pick replies by [Rule]: rules match on
// the last user message or tool output in the request and are usually loaded
// from a JSON file with [LoadRules]. The mockmodel command serves such a
// rule-based mock on a loopback address.
//
// Typical use in a test:
//
//	srv := modeltest.New()
//	defer srv.Close()
//	srv.Script(
//		modeltest.Reply{Calls: []modeltest.Call{{Name: "read_file", Arguments: `{"path":"a.go"}`}}},
//		modeltest.Reply{Text: []string{"Done", "."}},
//	)
//	// point the code under test at srv.URL() (an OPENAI_BASE_URL, ending in /v1)
package modeltest
