package settings

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/kin-dev/kin/agent/lockedfile"
)

// Model is what `kin login` stores: the model service's key, and the
// service and model when the person names them. Empty fields are left as
// the file has them.
type Model struct {
	APIKey  string
	BaseURL string
	Model   string
}

// SaveModel writes m into the file under home (created with mode 0600, its
// folder 0700), keeping every other field exactly as it was, including
// fields this kin does not know. The write is atomic and locked against
// other kin processes (package lockedfile). A file that is not a JSON
// object is left alone and reported, never overwritten.
func SaveModel(home string, m Model) error {
	path := Path(home)
	if err := checkFile(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("kin: saving %s: %w", path, err)
	}
	err := lockedfile.Update(path, func(data []byte, exists bool) ([]byte, error) {
		doc := map[string]json.RawMessage{}
		if exists && len(bytes.TrimSpace(data)) > 0 {
			if err := json.Unmarshal(data, &doc); err != nil {
				return nil, fmt.Errorf("kin: %s is not a JSON object (%v); fix or remove it first", path, err)
			}
			if doc == nil { // the file held null
				doc = map[string]json.RawMessage{}
			}
		}
		for key, v := range map[string]string{"openaiApiKey": m.APIKey, "openaiBaseUrl": m.BaseURL, "model": m.Model} {
			if v == "" {
				continue
			}
			b, err := json.Marshal(v)
			if err != nil {
				return nil, err
			}
			doc[key] = b
		}
		out, err := json.MarshalIndent(doc, "", "  ")
		if err != nil {
			return nil, err
		}
		return append(out, '\n'), nil
	})
	if err != nil {
		return fmt.Errorf("kin: saving %s: %w", path, err)
	}
	return nil
}

// ForgetKey removes the model service's key that `kin login` stored
// (openaiApiKey), keeping every other field exactly as it was; ACP's
// logout calls it. It reports whether there was one. A missing file holds
// no key; a file that is not a JSON object is left alone and reported.
func ForgetKey(home string) (bool, error) {
	path := Path(home)
	if err := checkFile(path); errors.Is(err, os.ErrNotExist) {
		return false, nil // no file, no key
	} else if err != nil {
		return false, fmt.Errorf("kin: forgetting the key in %s: %w", path, err)
	}
	removed := false
	err := lockedfile.Update(path, func(data []byte, exists bool) ([]byte, error) {
		if !exists || len(bytes.TrimSpace(data)) == 0 {
			return nil, nil // nothing to write
		}
		doc := map[string]json.RawMessage{}
		if err := json.Unmarshal(data, &doc); err != nil {
			return nil, fmt.Errorf("kin: %s is not a JSON object (%v); fix or remove it first", path, err)
		}
		if _, ok := doc["openaiApiKey"]; !ok {
			return nil, nil
		}
		delete(doc, "openaiApiKey")
		removed = true
		out, err := json.MarshalIndent(doc, "", "  ")
		if err != nil {
			return nil, err
		}
		return append(out, '\n'), nil
	})
	if err != nil {
		return false, fmt.Errorf("kin: forgetting the key in %s: %w", path, err)
	}
	return removed, nil
}
