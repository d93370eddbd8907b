package rpc

// Review: review/start runs a turn in ask mode over a diff with kin's
// review instructions; review/finding reports each finding before the
// turn ends (see PROTOCOL.md, "Review").
const (
	MethodReviewStart   = "review/start"
	NotifyReviewFinding = "review/finding"
)

// ReviewTarget is what a review looks at: exactly one of its fields.
type ReviewTarget struct {
	Uncommitted bool   `json:"uncommitted,omitempty"`
	Base        string `json:"base,omitempty"`
	Commit      string `json:"commit,omitempty"`
}

// ReviewStartParams is review/start's params; without sessionId kin makes a
// new session in the connection's workspace.
type ReviewStartParams struct {
	SessionID string       `json:"sessionId,omitempty"`
	Target    ReviewTarget `json:"target"`
}

// ReviewStartResult names the review's turn and what it looks at: the
// repository's root, the files the diff shows, the changed files left out
// (each with why) and whether the diff was cut.
type ReviewStartResult struct {
	SessionID string   `json:"sessionId"`
	TurnID    string   `json:"turnId"`
	Root      string   `json:"root"`
	Files     []string `json:"files"`
	Left      []string `json:"left,omitempty"`
	Cut       bool     `json:"cut,omitempty"`
}

// ReviewFinding is review/finding's params, and one of session/resume's
// findings. File is absolute; Range covers whole lines (character 0 of the
// first, up to character 0 of the line after the last).
type ReviewFinding struct {
	SessionID string `json:"sessionId"`
	TurnID    string `json:"turnId"`
	File      string `json:"file"`
	Range     Range  `json:"range"`
	Severity  string `json:"severity"` // error, warning, info
	Title     string `json:"title"`
	Body      string `json:"body,omitempty"`
}
