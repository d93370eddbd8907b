package model

import (
	"errors"
	"strings"
)

// Refusal is the service refusing a request as a whole: an answer of HTTP
// 4xx that is not about the key, the rate or the model's existence. The
// service read the request and did not run it, so nothing the model would
// have done happened; kin relies on that in two places only, each time
// making one new, different request: reasoning parameters the service does
// not take (Client.Stream leaves them out) and a conversation longer than
// the window (the agent compacts it).
type Refusal struct {
	Status int
	Param  string // the parameter the service named, if any
	Code   string // its error code, if any
	Detail string // its message, cleaned
	msg    string
}

func (r *Refusal) Error() string { return r.msg }

// proves reports whether the status is one where the service refused the
// request's content before running anything: 400 Bad Request, 413 Content
// Too Large, 422 Unprocessable Content (what servers built on FastAPI send).
func (r *Refusal) proves() bool { return r.Status == 400 || r.Status == 413 || r.Status == 422 }

// reasoningParams are the parameters a reasoning refusal names.
var reasoningParams = []string{"reasoning", "include", "reasoning_effort", "encrypted_content"}

// namesReasoning reports whether the refusal is about kin's reasoning
// parameters: the parameter it names is one of them, or (for servers that
// name none) its message says one of them is not supported.
func (r *Refusal) namesReasoning() bool {
	if !r.proves() {
		return false
	}
	p := strings.ToLower(r.Param)
	for _, name := range reasoningParams {
		if p == name || strings.HasPrefix(p, name+".") || strings.HasPrefix(p, name+"[") {
			return true
		}
	}
	if p != "" {
		return false
	}
	m := strings.ToLower(r.Detail)
	named := strings.Contains(m, "reasoning") || strings.Contains(m, "include") || strings.Contains(m, "encrypted")
	refused := false
	for _, w := range []string{"unsupported", "not supported", "unknown", "unrecognized", "unrecognised", "not allowed", "not permitted", "extra", "invalid"} {
		refused = refused || strings.Contains(m, w)
	}
	return named && refused
}

// Overflow reports whether the refusal says the request is longer than the
// model's context window.
func (r *Refusal) Overflow() bool {
	if !r.proves() {
		return false
	}
	if r.Code == "context_length_exceeded" {
		return true
	}
	m := strings.ToLower(r.Detail)
	for _, w := range overflowWords {
		if strings.Contains(m, w) {
			return true
		}
	}
	return false
}

// overflowWords are the words of the services' messages for a request
// longer than the model's window (a service that sends no
// context_length_exceeded code says it only in words): OpenAI's, vLLM's,
// DeepSeek's, Mistral's and LM Studio's ("maximum context length", "greater
// than the context length"), Anthropic's ("prompt is too long"), llama.cpp's
// ("request (13392 tokens) exceeds the available context size (8192
// tokens)"), Gemini's ("The input token count (1200345) exceeds the maximum
// number of tokens allowed (1048576).") and xAI's ("This model's maximum
// prompt length is 131072 but the request contains 145003 tokens."). A
// message kin does not recognise fails the turn where a compaction would
// have let it go on, turn after turn, as the conversation only grows.
var overflowWords = []string{"context length", "context window", "maximum context", "context_length", "prompt is too long",
	"too many tokens", "available context size", "exceeds the maximum number of tokens", "maximum prompt length"}

// IsOverflow reports whether err is a refusal of a conversation longer
// than the model's window.
func IsOverflow(err error) bool {
	var r *Refusal
	return errors.As(err, &r) && r.Overflow()
}
