package oauthtest

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync"
)

// Browser plays the person at the browser: Visit fetches a sign-in URL and
// follows the authorization server's redirect to kin's loopback callback.
// It only ever follows redirects to loopback addresses.
type Browser struct {
	// Before, when set, is called with the URL before it is fetched; an
	// error stops the visit (a person who closes the tab).
	Before func(u string) error

	// mu guards visited and pages.
	mu      sync.Mutex
	visited []string
	pages   []string
}

// Visit fetches u and follows redirects, like a browser would.
func (b *Browser) Visit(ctx context.Context, u string) error {
	if b.Before != nil {
		if err := b.Before(u); err != nil {
			return err
		}
	}
	b.mu.Lock()
	b.visited = append(b.visited, u)
	b.mu.Unlock()
	c := &http.Client{CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if !loopbackURI(req.URL.String()) {
			return fmt.Errorf("browser: refusing to follow a redirect off loopback")
		}
		if len(via) > 5 {
			return fmt.Errorf("browser: too many redirects")
		}
		return nil
	}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	page, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	b.mu.Lock()
	b.pages = append(b.pages, string(page))
	b.mu.Unlock()
	if resp.StatusCode >= 400 {
		return fmt.Errorf("browser: %s answered %d: %s", resp.Request.URL.Redacted(), resp.StatusCode, page)
	}
	return nil
}

// Visited returns the URLs visited so far.
func (b *Browser) Visited() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.visited...)
}

// Pages returns the bodies of the last pages the visits ended on.
func (b *Browser) Pages() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.pages...)
}

// Param returns a query parameter of a URL ("" when absent).
func Param(u, name string) string {
	p, err := url.Parse(u)
	if err != nil {
		return ""
	}
	return p.Query().Get(name)
}
