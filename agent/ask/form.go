package ask

import (
	"encoding/json"
	"fmt"
	"math"
	"net/mail"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// FieldType is what kind of value a form field takes.
type FieldType string

// Field types: the MCP elicitation schema's primitives (spec revision
// 2025-11-25), with its enum variants folded into two.
const (
	TypeString      FieldType = "string"
	TypeNumber      FieldType = "number"
	TypeInteger     FieldType = "integer"
	TypeBoolean     FieldType = "boolean"
	TypeEnum        FieldType = "enum"         // one of Choices
	TypeMultiSelect FieldType = "multi_select" // a list of Choices' values
)

// String formats a field may require.
const (
	FormatEmail    = "email"
	FormatURI      = "uri"
	FormatDate     = "date"
	FormatDateTime = "date-time"
)

// Choice is one option of an enum or multi-select field.
type Choice struct {
	Value string
	Title string // "" when the server gave no title
}

// Field is one question of a form.
type Field struct {
	Name        string
	Title       string
	Description string
	Type        FieldType
	Required    bool
	// Default is a string, float64, bool or []string, as Type says; nil
	// when there is none.
	Default any

	Format               string // strings: email, uri, date, date-time
	MinLength, MaxLength *int   // strings, in characters
	// Pattern is a string's regular expression (JSON Schema's pattern,
	// not anchored), one Go's regexp compiles (see CompilePattern).
	Pattern string
	// PatternKinOnly: the editors are not given Pattern to check as the
	// person types (their backtracking engines could take forever on it);
	// kin checks the answer against it all the same.
	PatternKinOnly     bool
	Minimum, Maximum   *float64
	Choices            []Choice // enum and multi_select
	MinItems, MaxItems *int     // multi_select
}

// Check returns the content to send when content answers the form: only its
// fields, every required one present, each value of its field's type and
// within its limits. Integers come back as int64 and selections as
// []string. When it does not fit, the error is FieldErrors naming every
// field that does not (in the form's order, unknown names last), so that a
// person can be asked again for just those; nothing partial is ever
// returned.
func Check(fields []Field, content map[string]any) (map[string]any, error) {
	var bad FieldErrors
	out := make(map[string]any, len(content))
	for _, f := range fields {
		v, ok := content[f.Name]
		if !ok {
			if f.Required {
				bad = append(bad, FieldError{Field: f.Name, Message: "is required"})
			}
			continue
		}
		kept, err := value(f, v)
		if err != nil {
			bad = append(bad, FieldError{Field: f.Name, Message: err.Error()})
			continue
		}
		out[f.Name] = kept
	}
	var unknown []string
	for k := range content {
		if !slices.ContainsFunc(fields, func(f Field) bool { return f.Name == k }) {
			unknown = append(unknown, k)
		}
	}
	slices.Sort(unknown)
	for _, k := range unknown {
		bad = append(bad, FieldError{Field: k, Message: "is not a field of this form"})
	}
	if len(bad) > 0 {
		return nil, bad
	}
	return out, nil
}

// FieldError is an answer that does not fit its field: Message says why,
// after the field's name ("must be at least 0").
type FieldError struct {
	Field   string
	Message string
}

// FieldErrors are the answers of a form that do not fit, one per field.
type FieldErrors []FieldError

func (e FieldErrors) Error() string {
	parts := make([]string, len(e))
	for i, f := range e {
		parts[i] = fmt.Sprintf("field %q %s", f.Field, f.Message)
	}
	return strings.Join(parts, "; ")
}

// WithDefaults returns checked content with every field left out that has
// a default set to it, as the MCP SDK does for an elicitation/create answer,
// so that every server gets answers the same way.
func WithDefaults(fields []Field, content map[string]any) map[string]any {
	for _, f := range fields {
		if _, ok := content[f.Name]; !ok && f.Default != nil {
			if d, err := value(f, f.Default); err == nil {
				content[f.Name] = d
			}
		}
	}
	return content
}

// value checks one answer against its field.
func value(f Field, v any) (any, error) {
	switch f.Type {
	case TypeString:
		s, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("must be text")
		}
		return s, checkString(f, s)
	case TypeNumber, TypeInteger:
		x, ok := number(v)
		if !ok {
			return nil, fmt.Errorf("must be a number")
		}
		if f.Minimum != nil && x < *f.Minimum {
			return nil, fmt.Errorf("must be at least %v", *f.Minimum)
		}
		if f.Maximum != nil && x > *f.Maximum {
			return nil, fmt.Errorf("must be at most %v", *f.Maximum)
		}
		if f.Type == TypeInteger {
			if x != math.Trunc(x) || math.Abs(x) > 1<<53 {
				return nil, fmt.Errorf("must be a whole number")
			}
			return int64(x), nil
		}
		return x, nil
	case TypeBoolean:
		b, ok := v.(bool)
		if !ok {
			return nil, fmt.Errorf("must be true or false")
		}
		return b, nil
	case TypeEnum:
		s, ok := v.(string)
		if !ok || !f.has(s) {
			return nil, fmt.Errorf("must be one of the choices")
		}
		return s, nil
	case TypeMultiSelect:
		list, ok := stringList(v)
		if !ok {
			return nil, fmt.Errorf("must be a list of the choices")
		}
		seen := map[string]bool{}
		for _, s := range list {
			if !f.has(s) {
				return nil, fmt.Errorf("must list only the choices (%q is not one)", s)
			}
			if seen[s] {
				return nil, fmt.Errorf("lists %q twice", s)
			}
			seen[s] = true
		}
		if f.MinItems != nil && len(list) < *f.MinItems {
			return nil, fmt.Errorf("needs at least %d choices", *f.MinItems)
		}
		if f.MaxItems != nil && len(list) > *f.MaxItems {
			return nil, fmt.Errorf("allows at most %d choices", *f.MaxItems)
		}
		return list, nil
	}
	return nil, fmt.Errorf("has a type kin cannot check (%q)", f.Type)
}

func (f Field) has(s string) bool {
	for _, c := range f.Choices {
		if c.Value == s {
			return true
		}
	}
	return false
}

func checkString(f Field, s string) error {
	n := utf8.RuneCountInString(s)
	if f.MinLength != nil && n < *f.MinLength {
		return fmt.Errorf("needs at least %d characters", *f.MinLength)
	}
	if f.MaxLength != nil && n > *f.MaxLength {
		return fmt.Errorf("allows at most %d characters", *f.MaxLength)
	}
	if f.Pattern != "" {
		re, err := CompilePattern(f.Pattern)
		if err != nil || !re.MatchString(s) {
			return fmt.Errorf("must match the pattern %s", f.Pattern)
		}
	}
	switch f.Format {
	case FormatEmail:
		a, err := mail.ParseAddress(s)
		if err != nil || a.Address != s {
			return fmt.Errorf("must be an email address")
		}
	case FormatURI:
		u, err := url.Parse(s)
		if err != nil || u.Scheme == "" || (u.Host == "" && u.Opaque == "" && u.Path == "") {
			return fmt.Errorf("must be a URI (scheme:…)")
		}
	case FormatDate:
		if _, err := time.Parse(time.DateOnly, s); err != nil {
			return fmt.Errorf("must be a date (YYYY-MM-DD)")
		}
	case FormatDateTime:
		if _, err := time.Parse(time.RFC3339, s); err != nil {
			return fmt.Errorf("must be a date and time (RFC 3339, e.g. 2026-11-30T23:15:00Z)")
		}
	}
	return nil
}

func number(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, !math.IsNaN(n) && !math.IsInf(n, 0)
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	case json.Number:
		x, err := n.Float64()
		return x, err == nil
	}
	return 0, false
}

func stringList(v any) ([]string, bool) {
	switch l := v.(type) {
	case []string:
		return append([]string{}, l...), true
	case []any:
		out := make([]string, 0, len(l))
		for _, e := range l {
			s, ok := e.(string)
			if !ok {
				return nil, false
			}
			out = append(out, s)
		}
		return out, true
	}
	return nil, false
}

// CompilePattern compiles a field's pattern. JSON Schema's patterns are
// ECMA 262 regular expressions; the ones Go's RE2 also reads (classes,
// groups, repetition, anchors: what forms use) mean the same in both, and a
// form with any other is not shown.
func CompilePattern(p string) (*regexp.Regexp, error) { return regexp.Compile(p) }
