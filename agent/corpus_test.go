package agent

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/kin-dev/kin/agent/model"
	"github.com/kin-dev/kin/agent/modeltest"
	"github.com/kin-dev/kin/agent/tool"
)

// corpus is agent/model/testdata: answers as real model services send them
// (see its README for where each shape comes from).
const corpus = "model/testdata"

// screen keeps what a person is shown of a Service's turns.
type screen struct {
	events
	mu        sync.Mutex
	text      strings.Builder // turn/delta, the answer
	refusal   strings.Builder // turn/delta with refusal set
	reasoning strings.Builder
	calls     []string // each call as the model asked for it: name and arguments
	usage     []UsageUpdate
	notices   []Notice
}

func (s *screen) Delta(d Delta) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if d.Refusal {
		s.refusal.WriteString(d.Text)
	} else {
		s.text.WriteString(d.Text)
	}
}

func (s *screen) Reasoning(d ReasoningDelta) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reasoning.WriteString(d.Text)
}

func (s *screen) ToolCall(c ToolCall) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c.Status == CallPending {
		s.calls = append(s.calls, c.Name+" "+c.Arguments)
	}
}

func (s *screen) Usage(u UsageUpdate) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.usage = append(s.usage, u)
}

func (s *screen) Notice(n Notice) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.notices = append(s.notices, n)
}

// corpusFile is a corpus file as the service sent it: its leading "#" lines
// (where the shape comes from) left out.
func corpusFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(corpus, name))
	if err != nil {
		t.Fatal(err)
	}
	for bytes.HasPrefix(b, []byte("#")) {
		_, b, _ = bytes.Cut(b, []byte("\n"))
	}
	return b
}

// sent is a request as the model reads it, one line per item: the
// conversation kin sent back (instructions left out).
func sent(r modeltest.Request) string {
	var lines []string
	body := gjson.ParseBytes(r.Raw)
	if r.API == "chat" {
		for _, m := range body.Get("messages").Array() {
			role := m.Get("role").Str
			switch role {
			case "system":
				continue
			case "tool":
				lines = append(lines, "tool "+m.Get("tool_call_id").Str)
				continue
			}
			line := []string{role + ":"}
			if c := chatText(m.Get("content")); c != "" {
				line = append(line, c)
			}
			if r := m.Get("refusal"); r.Exists() {
				line = append(line, "refusal="+r.Str)
			}
			if r := m.Get("reasoning_content"); r.Exists() {
				line = append(line, fmt.Sprintf("reasoning_content=%q", r.Str))
			}
			if r := m.Get("reasoning_details"); r.Exists() {
				line = append(line, "reasoning_details="+r.Raw)
			}
			for _, c := range m.Get("tool_calls").Array() {
				call := "call=" + c.Get("id").Str + " " + c.Get("function.name").Str + " " + c.Get("function.arguments").Str
				if e := c.Get("extra_content"); e.Exists() {
					call += " extra_content=" + e.Raw
				}
				line = append(line, call)
			}
			lines = append(lines, strings.Join(line, " "))
		}
		return strings.Join(lines, "\n")
	}
	for _, it := range body.Get("input").Array() {
		switch it.Get("type").Str {
		case "reasoning":
			lines = append(lines, "reasoning "+it.Get("encrypted_content").Str)
		case "function_call":
			lines = append(lines, "call "+it.Get("call_id").Str+" "+it.Get("name").Str+" "+it.Get("arguments").Str)
		case "function_call_output":
			lines = append(lines, "output "+it.Get("call_id").Str)
		default:
			role := it.Get("role").Str
			if p := it.Get("phase").Str; p != "" {
				role += "[" + p + "]"
			}
			lines = append(lines, role+": "+chatText(it.Get("content")))
		}
	}
	return strings.Join(lines, "\n")
}

// chatText is a message's content: a string, or its parts (a refusal part
// as "refusal=...").
func chatText(c gjson.Result) string {
	if !c.IsArray() {
		return c.Str
	}
	var b strings.Builder
	for _, p := range c.Array() {
		if r := p.Get("refusal"); r.Exists() {
			b.WriteString("refusal=" + r.Str)
			continue
		}
		b.WriteString(p.Get("text").Str)
	}
	return b.String()
}

// corpusCase is what a person must see of one corpus file, and what the
// next request must carry.
type corpusCase struct {
	file string
	api  string // model.APIResponses or model.APIChat
	// What the person sees: the answer's text byte for byte, the refusal,
	// the reasoning, each call (name and arguments), the first request's
	// usage, how the turn ended and its error.
	text, refusal, reasoning string
	calls                    []string
	usage                    model.Usage
	status                   string
	err                      string
	// retried says the service refused the first request over reasoning
	// parameters, so kin said so and sent a new one without them.
	retried bool
	// next is the request after this answer, as sent() shows it: the one
	// after the calls, or the next question's ("" when not checked).
	// nextLike is the same as a regular expression, where kin makes part
	// of it (a fresh call id in place of one the service repeated).
	next, nextLike string
}

// TestEveryRecordedStreamReadsAsItWasSent runs every answer of the corpus
// through kin, whole and split at every byte: what a person sees, and what
// the model is sent next.
func TestEveryRecordedStreamReadsAsItWasSent(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(corpus, "*.http"))
	tested := map[string]bool{}
	for _, c := range corpusCases {
		tested[c.file] = true
		for _, piece := range []int{0, 1} {
			t.Run(fmt.Sprintf("%s/piece=%d", strings.TrimSuffix(c.file, ".http"), piece), func(t *testing.T) {
				t.Parallel()
				runCorpusCase(t, c, piece)
			})
		}
	}
	for _, f := range files {
		if !tested[filepath.Base(f)] {
			t.Errorf("%s has no case: say what a person sees of it", filepath.Base(f))
		}
	}
}

func runCorpusCase(t *testing.T, c corpusCase, piece int) {
	m := modeltest.New()
	t.Cleanup(m.Close)
	scr := &screen{events: events{done: make(chan TurnDone, 8)}}
	svc := New(Options{Home: t.TempDir(), Model: model.Config{APIKey: "k", BaseURL: m.URL(), Model: "recorded", API: c.api},
		Tools: tool.Static(nil), Events: scr})
	t.Cleanup(svc.Shutdown)
	s, err := svc.NewSession(SessionOptions{Roots: []string{t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	m.Script(modeltest.Reply{Recorded: corpusFile(t, c.file), Piece: piece}, modeltest.Reply{Text: []string{"ok"}})
	if _, err := svc.StartTurn(s.Info.SessionID, TextInput("hi"), nil); err != nil {
		t.Fatal(err)
	}
	done := waitDone(t, scr.events)
	scr.mu.Lock()
	text, refusal, reasoning, calls := scr.text.String(), scr.refusal.String(), scr.reasoning.String(), slices.Clone(scr.calls)
	var usage model.Usage
	if len(scr.usage) > 0 {
		usage = model.Usage{InputTokens: scr.usage[0].InputTokens, OutputTokens: scr.usage[0].OutputTokens}
		if scr.usage[0].Estimated {
			// The service reported none: the turn counts kin's estimate
			// (spend limits), said as such; the recording's is zero.
			if c.usage != (model.Usage{}) || usage.InputTokens == 0 {
				t.Errorf("estimated usage %+v where the service reported %+v", usage, c.usage)
			}
			usage = model.Usage{}
		}
	}
	scr.mu.Unlock()
	if len(c.calls) > 0 {
		// The turn went on after the calls: the answer before is the first
		// request's alone.
		text = strings.TrimSuffix(text, "ok")
	}
	if text != c.text {
		t.Errorf("text\n%q\nwant\n%q", text, c.text)
	}
	if refusal != c.refusal {
		t.Errorf("refusal %q, want %q", refusal, c.refusal)
	}
	if reasoning != c.reasoning {
		t.Errorf("reasoning\n%q\nwant\n%q", reasoning, c.reasoning)
	}
	if !slices.Equal(calls, c.calls) {
		t.Errorf("calls\n%q\nwant\n%q", calls, c.calls)
	}
	scr.mu.Lock()
	var notices string
	for _, n := range scr.notices {
		notices += n.Message + "\n"
	}
	scr.mu.Unlock()
	if c.retried != strings.Contains(notices, "goes on without them") {
		t.Errorf("notices %q", notices)
	}
	if usage != c.usage && !c.retried {
		t.Errorf("usage %+v, want %+v", usage, c.usage)
	}
	status := c.status
	if status == "" {
		status = TurnCompleted
	}
	if done.Status != status || (c.err == "") != (done.Error == "") || !strings.Contains(done.Error, c.err) {
		t.Errorf("the turn ended %s (%q), want %s (%q)", done.Status, done.Error, status, c.err)
	}
	if c.next == "" && c.nextLike == "" {
		return
	}
	if len(c.calls) == 0 {
		if _, err := svc.StartTurn(s.Info.SessionID, TextInput("and then?"), nil); err != nil {
			t.Fatal(err)
		}
		waitDone(t, scr.events)
	}
	reqs := m.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want the answer's and the next", len(reqs))
	}
	if got := sent(reqs[1]); (c.nextLike == "" && got != c.next) || (c.nextLike != "" && !regexp.MustCompile("^"+c.nextLike+"$").MatchString(got)) {
		t.Errorf("the next request carries\n%s\nwant\n%s", got, c.next+c.nextLike)
	}
}

// corpusCases are the corpus's files and what each must show.
var corpusCases = []corpusCase{
	{file: "openai-responses-reasoning-parallel-calls.http", api: model.APIResponses,
		text:      "I'll read both files first.",
		reasoning: "**Reading the store**\n\nBoth files may define `Save`.",
		calls:     []string{`read_file {"path":"internal/store/store.go"}`, `read_file {"path":"internal/store/store_test.go"}`},
		usage:     model.Usage{InputTokens: 4213, OutputTokens: 187},
		next: `user: hi
reasoning gAAAAABpZPfn161F97aGv4oaf6SpDN7dwSgJrfoIPfX7fUE-j-KRRfqCQOHPhmnwHxgS5GEHwTs81RQr9SsZv9cKn1neM1fWnO7NXUgEpe6P_6pgvJJaV9IeFcfoGiWsvXmoMhBStBZ==
assistant[commentary]: I'll read both files first.
call call_jFkq3E3vWSg1oH7pZ2tQmX9a read_file {"path":"internal/store/store.go"}
call call_Xb81ZuQvTnR0c6LhY4aPdE2s read_file {"path":"internal/store/store_test.go"}
output call_jFkq3E3vWSg1oH7pZ2tQmX9a
output call_Xb81ZuQvTnR0c6LhY4aPdE2s`},
	{file: "openai-responses-commentary-then-answer.http", api: model.APIResponses,
		text:  "Got it\n\nHere are the three files:\n\n- `a.go`\n- `b.go`\n- `c.go`",
		usage: model.Usage{InputTokens: 1290, OutputTokens: 31},
		next: `user: hi
assistant[commentary]: Got it
assistant[final_answer]: Here are the three files:

- ` + "`a.go`\n- `b.go`\n- `c.go`" + `
user: and then?`},
	{file: "openai-responses-refusal.http", api: model.APIResponses,
		refusal: "I'm sorry, but I can't help with that.", status: TurnRefused,
		usage: model.Usage{InputTokens: 38, OutputTokens: 11},
		next:  "user: hi\nassistant: refusal=I'm sorry, but I can't help with that.\nuser: and then?"},
	{file: "openai-responses-incomplete-output-limit.http", api: model.APIResponses,
		text:   "Save writes the file in place, so a crash mid-write",
		status: TurnFailed, err: "stopped the answer at its output limit (max_output_tokens)",
		usage: model.Usage{InputTokens: 702, OutputTokens: 16},
		next:  "user: hi\nassistant: Save writes the file in place, so a crash mid-write\nuser: and then?"},
	{file: "openai-responses-incomplete-content-filter.http", api: model.APIResponses,
		status: TurnFailed, err: "content filter (content_filter)",
		usage: model.Usage{InputTokens: 455},
		next: "user: hi\nassistant: [no answer: this turn ended failed: the model service stopped the answer with its content filter " +
			"(content_filter); nothing was retried]\nuser: and then?"},
	{file: "openai-responses-failed.http", api: model.APIResponses,
		text: "Hello", status: TurnFailed, err: "could not finish the answer: The model failed to generate a response.",
		usage: model.Usage{InputTokens: 12, OutputTokens: 1}},
	{file: "openai-responses-error-event.http", api: model.APIResponses,
		text: "Hello", status: TurnFailed, err: "reported an error: Something went wrong"},
	{file: "codex-fixture-text-only-in-item-done.http", api: model.APIResponses,
		text: "fixture hello",
		next: "user: hi\nassistant: fixture hello\nuser: and then?"},
	{file: "openai-responses-text-only-in-completed.http", api: model.APIResponses,
		text:  "Checking the config.",
		calls: []string{`read_file {"path":"config.toml"}`},
		usage: model.Usage{InputTokens: 88, OutputTokens: 19},
		next:  "user: hi\nassistant: Checking the config.\ncall call_cfg1 read_file {\"path\":\"config.toml\"}\noutput call_cfg1"},
	{file: "openai-responses-echoed-request.http", api: model.APIResponses,
		text:  "The tests pass.",
		usage: model.Usage{InputTokens: 1310, OutputTokens: 6},
		next:  "user: hi\nassistant: The tests pass.\nuser: and then?"},
	{file: "openai-responses-empty.http", api: model.APIResponses,
		status: TurnFailed, err: "ended the answer with nothing in it (no text, no tool call, no refusal in response.completed)",
		usage: model.Usage{InputTokens: 20}},
	{file: "openai-http-429.http", api: model.APIResponses,
		status: TurnFailed, err: "rate limiting or out of quota (HTTP 429): wait 20 s and try again (Rate limit reached for gpt-5.1"},
	{file: "openai-http-400-context-length.http", api: model.APIResponses,
		status: TurnFailed, err: "the conversation is longer than the model's context window"},
	{file: "openai-chat-refusal.http", api: model.APIChat,
		refusal: "I'm sorry, I can't assist with that request.", status: TurnRefused,
		usage: model.Usage{InputTokens: 31, OutputTokens: 10},
		next:  "user: hi\nassistant: refusal=I'm sorry, I can't assist with that request.\nuser: and then?"},
	{file: "openai-chat-parallel-calls.http", api: model.APIChat,
		calls: []string{`get_weather {"location": "Paris"}`, `get_weather {"location": "Tokyo"}`},
		usage: model.Usage{InputTokens: 82, OutputTokens: 47},
		next: `user: hi
assistant: call=call_GRtiSXoH8k1uL9nW6Ma1 get_weather {"location": "Paris"} call=call_5vP0eLq2ZfB7cT3yHk8R get_weather {"location": "Tokyo"}
tool call_GRtiSXoH8k1uL9nW6Ma1
tool call_5vP0eLq2ZfB7cT3yHk8R`},
	{file: "openai-chat-arguments-split-anywhere.http", api: model.APIChat,
		text:  "Writing it.",
		calls: []string{`write_file {"path":"a.txt","content":"say \"hi\"\n caf\u00e9 \ud83d\ude00 ü😀"}`},
		usage: model.Usage{InputTokens: 60, OutputTokens: 33},
		next: `user: hi
assistant: Writing it. call=call_wr1te write_file {"path":"a.txt","content":"say \"hi\"\n caf\u00e9 \ud83d\ude00 ü😀"}
tool call_wr1te`},
	{file: "openai-chat-error-chunk.http", api: model.APIChat,
		text: "The question", status: TurnFailed,
		err: "reported an error mid-answer: The server had an error while processing your request. Sorry about that!"},
	{file: "azure-chat-content-filter-results.http", api: model.APIChat,
		text:  "Use `os.Rename` over a temp file.",
		usage: model.Usage{InputTokens: 25, OutputTokens: 9},
		next:  "user: hi\nassistant: Use `os.Rename` over a temp file.\nuser: and then?"},
	{file: "azure-chat-finish-content-filter.http", api: model.APIChat,
		text: "The scene", status: TurnFailed, err: "withheld the answer (finish_reason content_filter)"},
	{file: "azure-http-400-content-filter.http", api: model.APIChat,
		status: TurnFailed, err: "refused the request (HTTP 400): The response was filtered due to the prompt triggering Azure OpenAI's content management policy."},
	{file: "azure-responses-text.http", api: model.APIResponses,
		text:  "Done: the tests pass.",
		usage: model.Usage{InputTokens: 310, OutputTokens: 8},
		next:  "user: hi\nassistant: Done: the tests pass.\nuser: and then?"},
	{file: "xai-chat-reasoning-content.http", api: model.APIChat,
		reasoning: "The user asks for 101*3.", text: "101 × 3 = 303.",
		usage: model.Usage{InputTokens: 22, OutputTokens: 5},
		next:  "user: hi\nassistant: 101 × 3 = 303. reasoning_content=\"The user asks for 101*3.\"\nuser: and then?"},
	{file: "xai-chat-tool-call-whole.http", api: model.APIChat,
		calls: []string{`run_tests {"package":"./internal/store","verbose":true}`},
		usage: model.Usage{InputTokens: 412, OutputTokens: 31},
		next:  "user: hi\nassistant: call=call_40282196 run_tests {\"package\":\"./internal/store\",\"verbose\":true}\ntool call_40282196"},
	{file: "xai-http-400-prompt-length.http", api: model.APIChat,
		status: TurnFailed, err: "refused the request (HTTP 400): This model's maximum prompt length is 131072 but the request contains 145003 tokens.; the conversation is longer"},
	{file: "gemini-chat-thought-signature-calls.http", api: model.APIChat,
		calls: []string{`read_file {"path":"go.mod"}`, `read_file {"path":"go.sum"}`},
		usage: model.Usage{InputTokens: 1208, OutputTokens: 46},
		next: `user: hi
assistant: call=k3Vq9TzB read_file {"path":"go.mod"} extra_content={"google":{"thought_signature":"EpQECpEEAdHtim9xR2aZk0c7Lq+Vf3hT1o8mJ6y4bW2sN5uE0rD9iQ=="}} call=Xw7Lp2Hd read_file {"path":"go.sum"}
tool k3Vq9TzB
tool Xw7Lp2Hd`},
	{file: "gemini-http-400-token-count.http", api: model.APIChat,
		status: TurnFailed, err: "refused the request (HTTP 400): The input token count (1200345) exceeds the maximum number of tokens allowed (1048576).; the conversation is longer"},
	{file: "lmstudio-responses-reasoning-text.http", api: model.APIResponses,
		reasoning: "Need the file list; call list_dir.", text: "Listing it.",
		calls: []string{`list_dir {"path":"."}`},
		usage: model.Usage{InputTokens: 198, OutputTokens: 41},
		next:  "user: hi\nassistant: Listing it.\ncall call_839201746 list_dir {\"path\":\".\"}\noutput call_839201746"},
	{file: "lmstudio-http-200-unexpected-endpoint.http", api: model.APIResponses,
		status: TurnFailed, err: "answered with an error instead of a stream (HTTP 200): Unexpected endpoint or method. (POST /responses); check KIN_MODEL and OPENAI_BASE_URL"},
	{file: "lmstudio-chat-http-200-unexpected-endpoint.http", api: model.APIChat,
		status: TurnFailed, err: "answered with an error instead of a stream (HTTP 200): Unexpected endpoint or method. (POST /chat/completions); check KIN_MODEL and OPENAI_BASE_URL"},
	{file: "lmstudio-chat-reasoning.http", api: model.APIChat,
		reasoning: "Okay, the user wants a greeting.", text: "Hello! How can I help?",
		usage: model.Usage{InputTokens: 14, OutputTokens: 25},
		next:  "user: hi\nassistant: Hello! How can I help?\nuser: and then?"},
	{file: "ollama-chat-reasoning-tool-calls.http", api: model.APIChat,
		reasoning: "Two cities, two calls.",
		calls:     []string{`get_weather {"city":"Paris"}`, `get_weather {"city":"Berlin"}`},
		usage:     model.Usage{InputTokens: 164, OutputTokens: 58},
		next: `user: hi
assistant: call=call_x8ku2bqe get_weather {"city":"Paris"} call=call_9ad0tmrn get_weather {"city":"Berlin"}
tool call_x8ku2bqe
tool call_9ad0tmrn`},
	{file: "ollama-chat-calls-without-index.http", api: model.APIChat,
		calls: []string{`read_file {"path":"go.mod"}`, `read_file {"path":"go.sum"}`},
		next: `user: hi
assistant: call=call_ab12cd34 read_file {"path":"go.mod"} call=call_ef56gh78 read_file {"path":"go.sum"}
tool call_ab12cd34
tool call_ef56gh78`},
	{file: "ollama-responses-thinking-call.http", api: model.APIResponses,
		reasoning: "The user wants the module path.",
		calls:     []string{`read_file {"path":"go.mod"}`},
		usage:     model.Usage{InputTokens: 412, OutputTokens: 38},
		next:      "user: hi\nreasoning The user wants the module path.\ncall call_k2v9x7q1 read_file {\"path\":\"go.mod\"}\noutput call_k2v9x7q1"},
	{file: "ollama-http-404-model.http", api: model.APIChat,
		status: TurnFailed, err: `does not know this model or endpoint (HTTP 404): check KIN_MODEL and OPENAI_BASE_URL (model "qwen3:32b" not found, try pulling it first)`},
	{file: "vllm-chat-reasoning-tool-call.http", api: model.APIChat,
		reasoning: "I should grep for TODO.",
		calls:     []string{`grep {"pattern": "TODO"}`},
		usage:     model.Usage{InputTokens: 533, OutputTokens: 68},
		next: `user: hi
assistant: reasoning_content="I should grep for TODO." call=chatcmpl-tool-4f0c9e8a7b6d grep {"pattern": "TODO"}
tool chatcmpl-tool-4f0c9e8a7b6d`},
	{file: "vllm-chat-error-midstream.http", api: model.APIChat,
		text: "Partial", status: TurnFailed, err: "reported an error mid-answer: The engine encountered an error and was stopped."},
	{file: "vllm-http-400-context-length.http", api: model.APIChat,
		status: TurnFailed, err: "(HTTP 400): This model's maximum context length is 32768 tokens."},
	{file: "llamacpp-responses-reasoning-call.http", api: model.APIResponses,
		reasoning: "Need go.mod.", text: "Reading it.",
		calls: []string{`read_file {"path":"go.mod"}`},
		usage: model.Usage{InputTokens: 310, OutputTokens: 22},
		next:  "user: hi\nassistant: Reading it.\ncall call_Ab1 read_file {\"path\":\"go.mod\"}\noutput call_Ab1"},
	{file: "llamacpp-chat-reasoning-content.http", api: model.APIChat,
		reasoning: "Short question; short answer.", text: "Yes, it is atomic.",
		usage: model.Usage{InputTokens: 41, OutputTokens: 14},
		next:  "user: hi\nassistant: Yes, it is atomic. reasoning_content=\"Short question; short answer.\"\nuser: and then?"},
	{file: "llamacpp-chat-tool-call-malformed-arguments.http", api: model.APIChat,
		calls: []string{`read_file {"path":"internal/store/store.go`},
		usage: model.Usage{InputTokens: 902, OutputTokens: 21},
		next:  "user: hi\nassistant: call=Rb3nV8kQ2mZ7xW1pL5tY9cH4 read_file {}\ntool Rb3nV8kQ2mZ7xW1pL5tY9cH4"},
	{file: "llamacpp-chat-error-line.http", api: model.APIChat,
		status: TurnFailed, err: "refused the request (HTTP 400): the request exceeds the available context size, try increasing it; the conversation is longer than the model's context window"},
	{file: "llamacpp-chat-empty-tool-calls.http", api: model.APIChat,
		text:  "Hello! What should I look at?",
		usage: model.Usage{InputTokens: 1204, OutputTokens: 9},
		next:  "user: hi\nassistant: Hello! What should I look at?\nuser: and then?"},
	{file: "llamacpp-http-400-context-size.http", api: model.APIChat,
		status: TurnFailed, err: "exceeds the available context size (8192 tokens), try increasing it; the conversation is longer than the model's context window"},
	{file: "deepseek-chat-thinking-tool-call.http", api: model.APIChat,
		reasoning: "I need tomorrow's date first.",
		calls:     []string{`get_date {}`},
		usage:     model.Usage{InputTokens: 312, OutputTokens: 64},
		next: `user: hi
assistant: reasoning_content="I need tomorrow's date first." call=call_00_BjMr7K8N2hNqXiUE4w2TRa7a get_date {}
tool call_00_BjMr7K8N2hNqXiUE4w2TRa7a`},
	{file: "deepseek-chat-parallel-calls-one-id.http", api: model.APIChat,
		calls: []string{`read_file {"path":"a.go"}`, `read_file {"path":"b.go"}`},
		usage: model.Usage{InputTokens: 240, OutputTokens: 38},
		nextLike: `user: hi
assistant: call=call_00_Q7sLp2Vd9XkTm4Rb8Nc1Yw3e read_file \{"path":"a\.go"\} call=call_00_Q7sLp2Vd9XkTm4Rb8Nc1Yw3e_[A-Za-z0-9]{9} read_file \{"path":"b\.go"\}
tool call_00_Q7sLp2Vd9XkTm4Rb8Nc1Yw3e
tool call_00_Q7sLp2Vd9XkTm4Rb8Nc1Yw3e_[A-Za-z0-9]{9}`},
	{file: "deepseek-http-400-missing-reasoning-content.http", api: model.APIChat,
		status: TurnFailed, err: "refused the request (HTTP 400): Missing `reasoning_content` field in the assistant message at message index 2."},
	{file: "groq-chat-x-groq-usage.http", api: model.APIChat,
		reasoning: "Look up the issue.",
		calls:     []string{`get_issue {"number":23}`},
		usage:     model.Usage{InputTokens: 218, OutputTokens: 39},
		next: `user: hi
assistant: call=fc_0b1e0f4e-5e8b-4d7a-9a1c-2f3e4d5c6b7a get_issue {"number":23}
tool fc_0b1e0f4e-5e8b-4d7a-9a1c-2f3e4d5c6b7a`},
	{file: "groq-http-400-tool-use-failed.http", api: model.APIChat,
		status: TurnFailed, err: "refused the request (HTTP 400): Failed to call a function. Please adjust your prompt."},
	{file: "openrouter-chat-reasoning-details.http", api: model.APIChat,
		reasoning: "Checking the lock order.", text: "The cache takes mu before ioMu; keep that order.",
		usage: model.Usage{InputTokens: 530, OutputTokens: 61},
		next:  "user: hi\nassistant: The cache takes mu before ioMu; keep that order.\nuser: and then?"},
	{file: "openrouter-chat-gemini-reasoning-details-call.http", api: model.APIChat,
		reasoning: "**Finding the module**\n\nThe module path is in go.mod.",
		calls:     []string{`read_file {"path":"go.mod"}`},
		usage:     model.Usage{InputTokens: 1840, OutputTokens: 96},
		next: `user: hi
assistant: reasoning_details=[{"data":"CiQBjz1rX4tYp9wq2LmN8vB3cF6hJ0kR5sT7uV9xZ1aC3eG5iK7m","format":"google-gemini-v1","id":"tool_read_file_Qm3vX8sKp2","index":0,"type":"reasoning.encrypted"}] call=tool_read_file_Qm3vX8sKp2 read_file {"path":"go.mod"}
tool tool_read_file_Qm3vX8sKp2`},
	{file: "openrouter-chat-deepseek-v4-reasoning-call.http", api: model.APIChat,
		reasoning: "The user wants the module path; read go.mod.",
		calls:     []string{`read_file {"path":"go.mod"}`},
		usage:     model.Usage{InputTokens: 1520, OutputTokens: 44},
		next: `user: hi
assistant: reasoning_content="The user wants the module path; read go.mod." call=call_00_Tq8vK2mXp4RwL7nZs3Hd9Bfe read_file {"path":"go.mod"}
tool call_00_Tq8vK2mXp4RwL7nZs3Hd9Bfe`},
	{file: "openrouter-chat-midstream-error.http", api: model.APIChat,
		text: "Starting", status: TurnFailed, err: "reported an error mid-answer: Provider disconnected unexpectedly"},
	{file: "openrouter-chat-calls-without-finish-reason.http", api: model.APIChat,
		calls: []string{`list_dir {"path":"internal"}`},
		usage: model.Usage{InputTokens: 2210, OutputTokens: 19},
		next:  "user: hi\nassistant: call=functions.list_dir:0 list_dir {\"path\":\"internal\"}\ntool functions.list_dir:0"},
	{file: "openrouter-http-402-credits.http", api: model.APIChat,
		status: TurnFailed, err: "refused the request (HTTP 402): This request requires more credits, or fewer max_tokens."},
	{file: "openrouter-http-502-provider.http", api: model.APIChat,
		status: TurnFailed, err: "failed (HTTP 502 Bad Gateway): try again later (Provider returned error)"},
	{file: "qwen-dashscope-chat-reasoning.http", api: model.APIChat,
		reasoning: "用户问的是原子写入。", text: "先写临时文件，再 rename。",
		usage: model.Usage{InputTokens: 24, OutputTokens: 52},
		next:  "user: hi\nassistant: 先写临时文件，再 rename。 reasoning_content=\"用户问的是原子写入。\"\nuser: and then?"},
	{file: "qwen-dashscope-http-400-inspection.http", api: model.APIChat,
		status: TurnFailed, err: "refused the request (HTTP 400): Input data may contain inappropriate content."},
	{file: "mistral-chat-tool-call.http", api: model.APIChat,
		calls: []string{`run_command {"command": "go vet ./..."}`},
		usage: model.Usage{InputTokens: 1210, OutputTokens: 26},
		next:  "user: hi\nassistant: call=D681PevKs run_command {\"command\": \"go vet ./...\"}\ntool D681PevKs"},
	{file: "mistral-chat-thinking-content-parts.http", api: model.APIChat,
		reasoning: "Two plus two is four.", text: "4",
		usage: model.Usage{InputTokens: 12, OutputTokens: 48},
		next:  "user: hi\nassistant: 4\nuser: and then?"},
	// Mistral refuses reasoning_effort for a model without it (422,
	// extra_forbidden): kin goes on without reasoning parameters, with a
	// notice, and the new request answers.
	{file: "mistral-http-422.http", api: model.APIChat, text: "ok", retried: true},
	{file: "baseten-chat-events-without-blank-line.http", api: model.APIChat,
		text:  "Reading it.",
		calls: []string{`read_file {"path": "cmd/main.go"}`},
		usage: model.Usage{InputTokens: 3012, OutputTokens: 27},
		next:  "user: hi\nassistant: Reading it. call=call_b1e4f0c27d read_file {\"path\": \"cmd/main.go\"}\ntool call_b1e4f0c27d"},
	{file: "poolside-chat-call-id-changes.http", api: model.APIChat,
		calls: []string{`grep {"pattern": "TODO"}`},
		usage: model.Usage{InputTokens: 980, OutputTokens: 17},
		next:  "user: hi\nassistant: call=call_pZ3kQ8wN grep {\"pattern\": \"TODO\"}\ntool call_pZ3kQ8wN"},
	{file: "foundrylocal-chat-error-null.http", api: model.APIChat,
		text: "Use a temp file.",
		next: "user: hi\nassistant: Use a temp file.\nuser: and then?"},
	{file: "tgi-chat-tool-call-object.http", api: model.APIChat,
		calls:    []string{`read_file {"path":"a.go"}`},
		nextLike: `user: hi\nassistant: call=(call_[0-9a-f]{16}) read_file \{"path":"a\.go"\}\ntool call_[0-9a-f]{16}`},
	{file: "chat-done-variants.http", api: model.APIChat,
		text:  "Line one, line two.",
		usage: model.Usage{InputTokens: 5, OutputTokens: 6},
		next:  "user: hi\nassistant: Line one, line two.\nuser: and then?"},
	{file: "chat-data-null-between-chunks.http", api: model.APIChat,
		reasoning: "The user wants the test command.", text: "Run `go test ./...`.",
		usage: model.Usage{InputTokens: 40, OutputTokens: 18},
		next:  "user: hi\nassistant: Run `go test ./...`. reasoning_content=\"The user wants the test command.\"\nuser: and then?"},
	{file: "chat-no-done.http", api: model.APIChat,
		text: "No [DONE] here.", usage: model.Usage{InputTokens: 3, OutputTokens: 4}},
	{file: "chat-cr-line-ends.http", api: model.APIChat,
		text:  "Bare CR line ends.",
		usage: model.Usage{InputTokens: 6, OutputTokens: 4},
		next:  "user: hi\nassistant: Bare CR line ends.\nuser: and then?"},
	{file: "chat-bom.http", api: model.APIChat,
		text:  "After the BOM.",
		usage: model.Usage{InputTokens: 5, OutputTokens: 4},
		next:  "user: hi\nassistant: After the BOM.\nuser: and then?"},
	{file: "chat-parallel-calls-one-index-no-id.http", api: model.APIChat,
		calls: []string{`read_file {"path":"go.mod"}`, `grep {"pattern":"TODO"}`},
		usage: model.Usage{InputTokens: 640, OutputTokens: 29},
		nextLike: `user: hi
assistant: call=(call_[0-9a-f]{16}) read_file \{"path":"go\.mod"\} call=(call_[0-9a-f]{16}) grep \{"pattern":"TODO"\}
tool call_[0-9a-f]{16}
tool call_[0-9a-f]{16}`},
	{file: "chat-cut-before-finish.http", api: model.APIChat,
		text: "The first half", status: TurnFailed, err: "ended the answer without finishing it (no finish_reason)"},
}
