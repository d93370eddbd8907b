// Command relayfloor is the cheapest relay of a streamed model answer to an
// editor that kin's libraries allow, for benchmarks: one Responses API
// stream read with openai-go (retries off, as kin), each text delta written
// to stdout as a turn/delta notification through jsonrpc2 with LSP framing,
// and nothing else: no session, no log, no tools. kin's own relay
// (BenchmarkRelayPerDelta in cmd/kin) is measured against its CPU per delta.
// It is test tooling, never part of kin.
//
// By default each server-sent event is decoded into the two fields a relay
// needs (openai-go's SSE decoder, then encoding/json): the cheapest way
// through the libraries. With -sdk-events it is decoded into openai-go's
// full event union, as kin's model client does.
//
// Usage:
//
//	relayfloor [-sdk-events] BASE_URL
package main

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"os"

	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/responses"
	"github.com/sourcegraph/jsonrpc2"
)

// delta has the shape of kin's turn/delta params.
type delta struct {
	SessionID string `json:"sessionId"`
	TurnID    string `json:"turnId"`
	Text      string `json:"text"`
}

// event is the part of a server-sent event the relay needs.
type event struct {
	Type  string `json:"type"`
	Delta string `json:"delta"`
}

// stdio writes to stdout; there is nothing to read (an editor's requests
// play no part in the relay), so Read blocks until the process exits.
type stdio struct{}

func (stdio) Read(p []byte) (int, error)  { select {} }
func (stdio) Write(p []byte) (int, error) { return os.Stdout.Write(p) }
func (stdio) Close() error                { return nil }

func main() {
	sdk := flag.Bool("sdk-events", false, "decode events into openai-go's full event union, as kin does")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: relayfloor [-sdk-events] BASE_URL")
		os.Exit(2)
	}
	ctx := context.Background()
	conn := jsonrpc2.NewConn(ctx, jsonrpc2.NewBufferedStream(stdio{}, jsonrpc2.VSCodeObjectCodec{}),
		jsonrpc2.HandlerWithError(func(context.Context, *jsonrpc2.Conn, *jsonrpc2.Request) (any, error) { return nil, nil }))
	relay := func(text string) {
		if err := conn.Notify(ctx, "turn/delta", delta{SessionID: "s", TurnID: "t", Text: text}); err != nil {
			fail(err)
		}
	}
	svc := responses.NewResponseService(option.WithBaseURL(flag.Arg(0)), option.WithAPIKey("k"), option.WithMaxRetries(0))
	params := responses.ResponseNewParams{
		Model: "mock-1",
		Store: param.NewOpt(false),
		Input: responses.ResponseNewParamsInputUnion{OfString: param.NewOpt("go")},
	}
	if *sdk {
		stream := svc.NewStreaming(ctx, params)
		for stream.Next() {
			if ev := stream.Current(); ev.Type == "response.output_text.delta" {
				relay(ev.Delta)
			}
		}
		if err := stream.Err(); err != nil {
			fail(err)
		}
	} else {
		// The request NewStreaming makes, with the body left for the SSE
		// decoder.
		var raw *http.Response
		_, err := svc.New(ctx, params, option.WithJSONSet("stream", true), option.WithResponseBodyInto(&raw))
		stream := ssestream.NewStream[event](ssestream.NewDecoder(raw), err)
		for stream.Next() {
			if ev := stream.Current(); ev.Type == "response.output_text.delta" {
				relay(ev.Delta)
			}
		}
		if err := stream.Err(); err != nil {
			fail(err)
		}
	}
	_ = conn.Notify(ctx, "turn/completed", delta{SessionID: "s", TurnID: "t"})
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "relayfloor:", err)
	os.Exit(1)
}
