package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/term"

	"github.com/kin-dev/kin/agent/settings"
)

// runLogin stores the model service's key in $KIN_HOME/settings.json
// (0600), so that editors that start kin without the person's environment
// (an ACP client's terminal sign-in runs `kin acp login`) can run turns.
// The key is read from the terminal with echo off, or as one line from
// standard input when that is not a terminal; never from an argument,
// which other users of the machine could read in the process list.
func runLogin(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("login", flag.ContinueOnError)
	fs.SetOutput(stderr)
	baseURL := fs.String("base-url", "", "a Responses API service other than OpenAI's (stored as openaiBaseUrl)")
	modelName := fs.String("model", "", "the model to use (stored as model)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "kin login: unexpected arguments %q (the key is asked for, never given as an argument)\n", fs.Args())
		return 2
	}
	home := kinHome()
	path := settings.Path(home)
	service := *baseURL
	if service == "" {
		service = "OpenAI"
	}
	fmt.Fprintf(stderr, "kin keeps the key for %s in %s (readable by you only).\n", service, path)
	key, err := readKey(stdin, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "kin login: %v\n", err)
		return 1
	}
	if err := settings.SaveModel(home, settings.Model{APIKey: key, BaseURL: strings.TrimRight(*baseURL, "/"), Model: *modelName}); err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	fmt.Fprintf(stdout, "kin: saved; editors that start kin can now run turns.\n")
	if os.Getenv("OPENAI_API_KEY") != "" {
		fmt.Fprintln(stderr, "kin: note: OPENAI_API_KEY is set in this environment, and wins over the stored key wherever it is set.")
	}
	return 0
}

// readKey asks for the key on the terminal without echo, or reads one line
// from stdin when it is not a terminal (scripts, tests).
func readKey(stdin io.Reader, stderr io.Writer) (string, error) {
	var key string
	if f, ok := stdin.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		fmt.Fprint(stderr, "API key (input hidden): ")
		b, err := term.ReadPassword(int(f.Fd()))
		fmt.Fprintln(stderr)
		if err != nil {
			return "", fmt.Errorf("reading the key: %w", err)
		}
		key = string(b)
	} else {
		line, err := bufio.NewReader(stdin).ReadString('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return "", fmt.Errorf("reading the key: %w", err)
		}
		key = line
	}
	key = strings.TrimSpace(key)
	switch {
	case key == "":
		return "", errors.New("no key given; nothing was saved")
	case strings.ContainsAny(key, " \t\r\n"):
		return "", errors.New("the key has spaces in it; nothing was saved (paste the key alone)")
	}
	return key, nil
}
