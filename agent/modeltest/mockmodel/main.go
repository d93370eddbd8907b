// Command mockmodel serves kin's rule-based mock of the OpenAI Responses API
// on a loopback address, for tests that run kin as a separate process. It is
// test tooling, never a real model service.
//
// Usage:
//
//	mockmodel [-rules rules.json] [-addr 127.0.0.1:0] [-port-file F] [-exit-on-stdin-close]
//
// It prints "listening http://127.0.0.1:PORT/v1" on stdout, writes the same
// base URL to the port file if one is given, logs each request to stderr and
// runs until SIGINT or SIGTERM (or until stdin closes, if asked to).
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/kin-dev/kin/agent/modeltest"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "mockmodel:", err)
		os.Exit(1)
	}
}

func run() error {
	rulesPath := flag.String("rules", "", "JSON rules file (an array of rules, or {\"rules\": [...]})")
	addr := flag.String("addr", "127.0.0.1:0", "loopback address to listen on")
	portFile := flag.String("port-file", "", "write the base URL (http://host:port/v1) to this file")
	stdinExit := flag.Bool("exit-on-stdin-close", false, "exit when stdin reaches EOF")
	flag.Parse()
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGINT, syscall.SIGTERM)
	if flag.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", flag.Args())
	}

	rules := []modeltest.Rule{}
	if *rulesPath != "" {
		var err error
		if rules, err = modeltest.LoadRules(*rulesPath); err != nil {
			return err
		}
	}
	if err := checkLoopback(*addr); err != nil {
		return err
	}
	l, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	if ip := l.Addr().(*net.TCPAddr).IP; !ip.IsLoopback() {
		l.Close()
		return fmt.Errorf("refusing non-loopback address %s", l.Addr())
	}

	srv := modeltest.NewWithListener(l)
	defer srv.Close()
	srv.SetRules(rules)
	srv.SetLog(os.Stderr)

	if *portFile != "" {
		if err := writeFileAtomic(*portFile, srv.URL()); err != nil {
			return err
		}
	}
	fmt.Printf("listening %s\n", srv.URL())
	fmt.Fprintf(os.Stderr, "mockmodel: %d rules, serving %s\n", len(rules), srv.URL())

	stdinClosed := make(chan struct{})
	if *stdinExit {
		go func() {
			_, _ = io.Copy(io.Discard, os.Stdin)
			close(stdinClosed)
		}()
	}
	select {
	case sig := <-stop:
		fmt.Fprintf(os.Stderr, "mockmodel: %v, exiting\n", sig)
	case <-stdinClosed:
		fmt.Fprintln(os.Stderr, "mockmodel: stdin closed, exiting")
	}
	return nil
}

// checkLoopback refuses addresses that are not explicitly loopback; an empty
// host would listen on every interface.
func checkLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return errors.New("refusing non-loopback address " + addr + " (use 127.0.0.1:PORT)")
}

// writeFileAtomic writes data so that readers never see a partial file.
func writeFileAtomic(path, data string) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".mockmodel-*")
	if err != nil {
		return err
	}
	if _, err := tmp.WriteString(data); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), path)
}
