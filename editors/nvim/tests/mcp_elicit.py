#!/usr/bin/env python3
"""A tiny MCP server over stdio for kin.nvim's integration tests.

It offers one tool, ask_name, which asks the person for their name (and a pet,
and whether they agree) through elicitation/create and answers "Hello <name>"
(or says it was declined). Its properties are not in the names' order, and
two have descriptions: kin.nvim must show both as the server wrote them.
Newline-delimited JSON-RPC on stdin/stdout, no dependencies.
"""
import json
import sys


def send(msg):
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()


def read():
    line = sys.stdin.readline()
    if not line:
        sys.exit(0)
    return json.loads(line)


TOOL = {
    "name": "ask_name",
    "description": "Asks the person for their name and greets them.",
    "inputSchema": {"type": "object", "properties": {}},
}

pending = []  # messages read while waiting for an elicitation answer


def elicit(call_id):
    send({
        "jsonrpc": "2.0",
        "id": "elicit-%s" % call_id,
        "method": "elicitation/create",
        "params": {
            "message": "What is your name?",
            "requestedSchema": {
                "type": "object",
                # In this order, which is not the names' (agree, name, pet): kin keeps it.
                "properties": {
                    "name": {"type": "string", "title": "Name", "description": "Your full name"},
                    "pet": {"type": "string", "title": "Pet", "enum": ["pet-1", "pet-2"],
                            "enumNames": ["Cats", "Dogs"], "default": "pet-1"},
                    "agree": {"type": "boolean", "title": "Boolean", "description": "I agree to the terms"},
                },
                "required": ["name"],
            },
        },
    })
    while True:
        msg = read()
        if msg.get("id") == "elicit-%s" % call_id and "method" not in msg:
            return msg
        pending.append(msg)


def handle(msg):
    method = msg.get("method")
    mid = msg.get("id")
    if method == "initialize":
        version = (msg.get("params") or {}).get("protocolVersion") or "2025-06-18"
        send({"jsonrpc": "2.0", "id": mid, "result": {
            "protocolVersion": version,
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "asker", "version": "0.0.1"},
        }})
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": mid, "result": {"tools": [TOOL]}})
    elif method == "tools/call":
        answer = elicit(mid)
        result = answer.get("result") or {}
        if result.get("action") == "accept":
            text = "Hello %s" % (result.get("content") or {}).get("name", "?")
        else:
            text = "The person %s." % (result.get("action") or "did not answer")
        send({"jsonrpc": "2.0", "id": mid, "result": {"content": [{"type": "text", "text": text}]}})
    elif method == "ping":
        send({"jsonrpc": "2.0", "id": mid, "result": {}})
    elif mid is not None and method is not None:
        send({"jsonrpc": "2.0", "id": mid, "error": {"code": -32601, "message": "method not found"}})


while True:
    m = pending.pop(0) if pending else read()
    handle(m)
