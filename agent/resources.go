package agent

import (
	"context"
	"time"
)

// ResourceReader reads an MCP server's resource for a question the person
// asked (an input part naming the server and the URI): the text the model
// gets, already framed as the server's untrusted data and cut to the
// server's limits. An error refuses the question, nothing sent.
type ResourceReader interface {
	ReadResource(ctx context.Context, sessionID, server, uri string) (string, error)
}

// maxResourceWait bounds how long turn/start waits for a server to answer
// one resource read (the server's own timeout may be shorter).
const maxResourceWait = 30 * time.Second

// resourceReader is what assemble reads resource parts with.
func (s *Service) resourceReader(ctx context.Context, sessionID string) func(server, uri string) (string, error) {
	if s.opts.Resources == nil {
		return nil
	}
	return func(server, uri string) (string, error) {
		ctx, cancel := context.WithTimeout(ctx, maxResourceWait)
		defer cancel()
		return s.opts.Resources.ReadResource(ctx, sessionID, server, uri)
	}
}
