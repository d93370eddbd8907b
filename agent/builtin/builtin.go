package builtin

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"sort"
	"strings"
	"time"

	"github.com/kin-dev/kin/agent/boundary"
	"github.com/kin-dev/kin/agent/sandbox"
	"github.com/kin-dev/kin/agent/tool"
)

// Options tunes the built-in tools. The zero value is ready to use.
type Options struct {
	// Shell runs bash commands as `Shell -c command`. Default /bin/bash, or
	// /bin/sh where there is no bash.
	Shell string
	// BashTimeout is how long a command may run when the call gives no
	// timeout. Default 120 s.
	BashTimeout time.Duration
	// BashMaxTimeout is the most a call may ask for. Default 10 min.
	BashMaxTimeout time.Duration
	// KillGrace is how long a command's process group has between SIGTERM
	// and SIGKILL when it is stopped. Default 2 s.
	KillGrace time.Duration
	// Env is the environment commands run with. Nil means this process's
	// environment, plus PAGER=cat, GIT_PAGER=cat and GIT_TERMINAL_PROMPT=0
	// (commands have no terminal and no stdin). Either way kin's model keys
	// (boundary.ModelKeyVars: OPENAI_API_KEY and every apiKeyEnv of
	// settings.json, read again for every command) are taken out.
	Env []string
	// KinHome is $KIN_HOME ("" for the default): where settings.json names
	// the model keys.
	KinHome string
	// Sandbox confines bash commands. Nil means sandbox.Default(): auto
	// mode, where commands are confined when the system allows it.
	Sandbox *sandbox.Sandbox
}

func (o Options) withDefaults() Options {
	if o.Shell == "" {
		o.Shell = "/bin/bash"
		if _, err := os.Stat(o.Shell); err != nil {
			o.Shell = "/bin/sh"
		}
	}
	if o.BashTimeout <= 0 {
		o.BashTimeout = 120 * time.Second
	}
	if o.BashMaxTimeout <= 0 {
		o.BashMaxTimeout = 10 * time.Minute
	}
	if o.BashMaxTimeout < o.BashTimeout {
		o.BashMaxTimeout = o.BashTimeout
	}
	if o.Sandbox == nil {
		o.Sandbox = sandbox.Default()
	}
	if o.KillGrace <= 0 {
		o.KillGrace = 2 * time.Second
	}
	if o.Env == nil {
		o.Env = append(os.Environ(), "PAGER=cat", "GIT_PAGER=cat", "GIT_TERMINAL_PROMPT=0")
	}
	return o
}

// env is the environment of one command: Env without kin's model keys. A
// command the model asked for never gets them: its output goes back to the
// model, and an innocent-looking `env` would hand the model kin's key.
func (o Options) env() []string { return boundary.CommandEnv(o.Env, o.KinHome) }

// Tool names, fixed: models and grants refer to them.
const (
	NameReadFile  = "read_file"
	NameListDir   = "list_dir"
	NameSearch    = "search"
	NameWriteFile = "write_file"
	NameEditFile  = "edit_file"
	NameBash      = "bash"
)

// Tools returns the built-in tools: read_file, list_dir, search, write_file,
// edit_file and bash, in that order.
func Tools(opts Options) []tool.Tool {
	opts = opts.withDefaults()
	return append(ReadTools(), writeFileTool{}, editFileTool{}, bashTool{opts: opts})
}

// ReadTools returns the built-in tools that only read files: read_file,
// list_dir and search. None runs a command or changes anything; their
// paths, secrets and file access are the call's tool.Env's, as for the
// model. An agent hook's judge is offered these and nothing else.
func ReadTools() []tool.Tool {
	return []tool.Tool{readFileTool{}, listDirTool{}, searchTool{}}
}

// decodeArgs decodes a call's JSON arguments into dst (a pointer to a
// struct with json tags), refusing unknown fields, wrong types and missing
// required fields with messages a model can act on.
func decodeArgs(toolName string, raw json.RawMessage, dst any, required ...string) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		raw = []byte("{}")
	}
	allowed := jsonFields(dst)
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		return fmt.Errorf("%s: the arguments must be a JSON object with the fields %s", toolName, strings.Join(allowed, ", "))
	}
	var unknown []string
	for k := range fields {
		if !contains(allowed, k) {
			unknown = append(unknown, fmt.Sprintf("%q", k))
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return fmt.Errorf("%s: unknown argument %s; the arguments are %s", toolName, strings.Join(unknown, ", "), strings.Join(allowed, ", "))
	}
	for _, r := range required {
		if v, ok := fields[r]; !ok || string(bytes.TrimSpace(v)) == "null" {
			return fmt.Errorf("%s: the argument %q is required", toolName, r)
		}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return fmt.Errorf("%s: the argument %q must be %s, not %s", toolName, te.Field, typeName(te.Type), te.Value)
		}
		return fmt.Errorf("%s: bad arguments: %v", toolName, err)
	}
	return nil
}

// jsonFields lists the json names of the struct dst points to.
func jsonFields(dst any) []string {
	t := reflect.TypeOf(dst)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	var names []string
	for i := 0; i < t.NumField(); i++ {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			names = append(names, name)
		}
	}
	return names
}

func typeName(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Int, reflect.Int64, reflect.Int32:
		return "an integer"
	case reflect.Float64, reflect.Float32:
		return "a number"
	case reflect.Bool:
		return "a boolean"
	case reflect.Slice:
		return "an array"
	case reflect.Struct, reflect.Map:
		return "an object"
	}
	return t.String()
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// spec builds a tool.Spec; schema must be a JSON Schema object.
func spec(name, description, schema string, kind tool.Kind) tool.Spec {
	return tool.Spec{
		Name:        name,
		Description: strings.TrimSpace(description),
		Parameters:  json.RawMessage(schema),
		Strict:      false,
		Kind:        kind,
	}
}

// plural returns "1 line" / "3 lines".
func plural(n int, word string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}
