package tool

// Brief is a tool server's own text about how to use it (an MCP server's
// instructions). It is someone else's text: package agent sends it framed
// as that server's untrusted text and capped (agent/boundary's Frame).
type Brief struct {
	Server string
	Text   string
}

// Briefing is a Source whose servers brief the model.
type Briefing interface {
	Briefs() []Brief
}
