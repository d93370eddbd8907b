package ask_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/kin-dev/kin/agent/ask"
)

func ptr[T any](v T) *T { return &v }

func TestCheckKeepsOnlyAnswersThatFitTheForm(t *testing.T) {
	fields := []ask.Field{
		{Name: "name", Type: ask.TypeString, Required: true, MinLength: ptr(2), MaxLength: ptr(5)},
		{Name: "email", Type: ask.TypeString, Format: ask.FormatEmail},
		{Name: "home", Type: ask.TypeString, Format: ask.FormatURI},
		{Name: "born", Type: ask.TypeString, Format: ask.FormatDate},
		{Name: "at", Type: ask.TypeString, Format: ask.FormatDateTime},
		{Name: "n", Type: ask.TypeInteger, Minimum: ptr(1.0), Maximum: ptr(100.0)},
		{Name: "x", Type: ask.TypeNumber, Minimum: ptr(0.0)},
		{Name: "ok", Type: ask.TypeBoolean},
		{Name: "hero", Type: ask.TypeEnum, Choices: []ask.Choice{{"hero-1", "Superman"}, {"hero-2", "Green Lantern"}}},
		{Name: "fish", Type: ask.TypeMultiSelect, MinItems: ptr(1), MaxItems: ptr(2),
			Choices: []ask.Choice{{"fish-1", "Tuna"}, {"fish-2", "Salmon"}, {"fish-3", "Trout"}}},
	}
	good := map[string]any{
		"name": "Ana", "email": "ana@example.com", "home": "https://ana.example", "born": "1990-04-01",
		"at": "2026-11-30T23:15:00Z", "n": float64(42), "x": 3.14, "ok": true, "hero": "hero-2",
		"fish": []any{"fish-1", "fish-3"},
	}
	got, err := ask.Check(fields, good)
	if err != nil {
		t.Fatal(err)
	}
	if got["n"] != int64(42) || !reflect.DeepEqual(got["fish"], []string{"fish-1", "fish-3"}) || got["x"] != 3.14 {
		t.Errorf("normalised %#v", got)
	}
	if _, err := ask.Check(fields, map[string]any{"name": "Ana"}); err != nil {
		t.Errorf("only the required field: %v", err)
	}
	for _, tc := range []struct {
		change map[string]any
		want   string
	}{
		{map[string]any{"name": nil}, `"name" is required`},
		{map[string]any{"name": "A"}, "at least 2 characters"},
		{map[string]any{"name": "Ángela"}, "at most 5 characters"},
		{map[string]any{"name": 7.0}, "must be text"},
		{map[string]any{"email": "Ana <ana@example.com>"}, "email address"},
		{map[string]any{"email": "ana"}, "email address"},
		{map[string]any{"home": "ana.example"}, "URI"},
		{map[string]any{"born": "01/04/1990"}, "date (YYYY-MM-DD)"},
		{map[string]any{"at": "2026-11-30 23:15"}, "RFC 3339"},
		{map[string]any{"n": 3.5}, "whole number"},
		{map[string]any{"n": float64(0)}, "at least 1"},
		{map[string]any{"n": float64(101)}, "at most 100"},
		{map[string]any{"n": "42"}, "must be a number"},
		{map[string]any{"ok": "yes"}, "true or false"},
		{map[string]any{"hero": "Superman"}, "one of the choices"},
		{map[string]any{"fish": "fish-1"}, "list of the choices"},
		{map[string]any{"fish": []any{}}, "at least 1 choices"},
		{map[string]any{"fish": []any{"fish-1", "fish-2", "fish-3"}}, "at most 2 choices"},
		{map[string]any{"fish": []any{"fish-1", "fish-1"}}, "twice"},
		{map[string]any{"fish": []any{"Tuna"}}, `"Tuna" is not one`},
		{map[string]any{"fish": []any{1.0}}, "list of the choices"},
		{map[string]any{"extra": 1.0}, `field "extra" is not a field of this form`},
	} {
		content := map[string]any{}
		for k, v := range good {
			content[k] = v
		}
		for k, v := range tc.change {
			if v == nil {
				delete(content, k)
			} else {
				content[k] = v
			}
		}
		got, err := ask.Check(fields, content)
		if err == nil || !strings.Contains(err.Error(), tc.want) || got != nil {
			t.Errorf("%v: got %v, %v; want an error with %q", tc.change, got, err, tc.want)
		}
	}
}

func TestWithDefaultsFillsWhatWasLeftOut(t *testing.T) {
	fields := []ask.Field{
		{Name: "n", Type: ask.TypeInteger, Default: float64(42)},
		{Name: "fish", Type: ask.TypeMultiSelect, Choices: []ask.Choice{{Value: "a"}, {Value: "b"}}, Default: []string{"b"}},
		{Name: "s", Type: ask.TypeString, Default: "x"},
		{Name: "none", Type: ask.TypeString},
	}
	got := ask.WithDefaults(fields, map[string]any{"s": "typed"})
	want := map[string]any{"n": int64(42), "fish": []string{"b"}, "s": "typed"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %#v, want %#v", got, want)
	}
}

// An answer with several bad fields names every one of them, in the form's
// order (unknown names last), so that a person is asked again for those
// only; the good ones are not among them.
func TestCheckNamesEveryFieldThatDoesNotFit(t *testing.T) {
	min := 0.0
	fields := []ask.Field{
		{Name: "name", Type: ask.TypeString, Required: true},
		{Name: "code", Type: ask.TypeString, Pattern: `^[A-Z]{3}-\d{2}$`},
		{Name: "age", Type: ask.TypeInteger, Minimum: &min},
		{Name: "email", Type: ask.TypeString, Format: ask.FormatEmail},
	}
	_, err := ask.Check(fields, map[string]any{"code": "ab-1", "age": -3.0, "email": "ana@example.com", "zz": 1.0})
	var fe ask.FieldErrors
	if !errors.As(err, &fe) {
		t.Fatalf("error %v is not FieldErrors", err)
	}
	got := []string{}
	for _, f := range fe {
		got = append(got, f.Field+" "+f.Message)
	}
	want := []string{"name is required", `code must match the pattern ^[A-Z]{3}-\d{2}$`, "age must be at least 0", "zz is not a field of this form"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	if _, err := ask.Check(fields, map[string]any{"name": "Ana", "code": "ABC-12"}); err != nil {
		t.Errorf("a matching pattern: %v", err)
	}
}
