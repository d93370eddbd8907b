package model

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"hash/maphash"
	"net/url"
	"slices"
	"sync"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"

	"github.com/kin-dev/kin/agent/tool"
)

// Tool definitions are most of a request's fixed part and the same at
// every step of every turn until a tool source changes. They are encoded
// once per change of the list: each definition's JSON, as openai-go writes
// it, is kept and handed to the SDK as raw JSON (param.Override), so a
// request costs comparing the list with the one encoded, not decoding and
// encoding every schema again. The same bytes every time also keep the
// request's prefix identical between requests, which services' prompt
// caches need.

// encodedTools is one tool list, encoded for both APIs.
type encodedTools struct {
	specs     []tool.Spec
	responses []responses.ToolUnionParam
	chat      []openai.ChatCompletionToolUnionParam
	digest    [sha256.Size]byte // of the encoded definitions, for the cache key
}

// toolCache holds the lists encoded lately, by a hash of their content (a
// few: sessions differ by their MCP servers and modes).
var toolCache struct {
	mu   sync.Mutex
	seed maphash.Seed
	m    map[uint64]*encodedTools
}

const toolCacheSize = 16

func specsHash(seed maphash.Seed, specs []tool.Spec) uint64 {
	var h maphash.Hash
	h.SetSeed(seed)
	for _, s := range specs {
		h.WriteString(s.Name)
		h.WriteByte(0)
		h.WriteString(s.Description)
		h.WriteByte(0)
		h.Write(s.Parameters)
		h.WriteByte(0)
		if s.Strict {
			h.WriteByte(1)
		}
	}
	return h.Sum64()
}

func sameSpecs(a, b []tool.Spec) bool {
	return slices.EqualFunc(a, b, func(x, y tool.Spec) bool {
		return x.Name == y.Name && x.Description == y.Description && x.Strict == y.Strict && bytes.Equal(x.Parameters, y.Parameters)
	})
}

// toolsFor returns specs encoded, from the cache when they were before.
func toolsFor(specs []tool.Spec) *encodedTools {
	toolCache.mu.Lock()
	defer toolCache.mu.Unlock()
	if toolCache.m == nil {
		toolCache.seed = maphash.MakeSeed()
		toolCache.m = map[uint64]*encodedTools{}
	}
	k := specsHash(toolCache.seed, specs)
	if e := toolCache.m[k]; e != nil && sameSpecs(e.specs, specs) {
		return e
	}
	e := encodeTools(specs)
	if len(toolCache.m) >= toolCacheSize {
		clear(toolCache.m)
	}
	toolCache.m[k] = e
	return e
}

func encodeTools(specs []tool.Spec) *encodedTools {
	e := &encodedTools{specs: slices.Clone(specs)}
	h := sha256.New()
	for _, s := range specs {
		params := toolParameters(s)
		rf := responses.ToolParamOfFunction(s.Name, params, s.Strict).OfFunction
		if s.Description != "" {
			rf.Description = param.NewOpt(s.Description)
		}
		raw, err := json.Marshal(rf)
		if err == nil {
			o := param.Override[responses.FunctionToolParam](json.RawMessage(raw))
			rf = &o
			h.Write(raw)
		}
		e.responses = append(e.responses, responses.ToolUnionParam{OfFunction: rf})

		fn := shared.FunctionDefinitionParam{Name: s.Name, Parameters: params}
		if s.Description != "" {
			fn.Description = param.NewOpt(s.Description)
		}
		if s.Strict {
			fn.Strict = param.NewOpt(true)
		}
		ct := openai.ChatCompletionFunctionTool(fn)
		if raw, err := json.Marshal(ct.OfFunction); err == nil {
			o := param.Override[openai.ChatCompletionFunctionToolParam](json.RawMessage(raw))
			ct.OfFunction = &o
		}
		e.chat = append(e.chat, ct)
	}
	copy(e.digest[:], h.Sum(nil))
	return e
}

// promptCacheKey names the request's stable prefix (instructions and
// tools) for the service's prompt cache: requests that share it are routed
// where that prefix is cached. It says nothing of the conversation (a
// digest, cut short).
func promptCacheKey(instructions string, t *encodedTools) string {
	h := sha256.New()
	h.Write(t.digest[:])
	h.Write([]byte(instructions))
	return "kin-" + hex.EncodeToString(h.Sum(nil)[:12])
}

// takesPromptCacheKey reports whether a Chat Completions service is known
// to take prompt_cache_key: OpenAI's does; other services that speak the
// API (local servers, proxies) may refuse a field they do not know, so
// they are not sent it. The Responses API takes it wherever it is served.
func takesPromptCacheKey(baseURL string) bool {
	if baseURL == "" {
		return true
	}
	u, err := url.Parse(baseURL)
	return err == nil && u.Hostname() == "api.openai.com"
}
