#!/usr/bin/env python3
"""ragpp serve against HTTP clients we did not write (Python's http.client, and curl):
the JSON of the commands, tokens and groups, the client's mistakes (400, 401, 404, 413),
get after a deletion (410), MCP over HTTP, concurrent requests while ragpp index commits
generations (no request fails, the new generation is used), and SIGTERM.
Usage: serve_http.py RAGPP WORK. Prints "serve http: N checks passed" when all passed."""
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve_support import Served  # noqa: E402

ragpp, work = sys.argv[1], sys.argv[2]
srv = Served(ragpp, work, ["hr"])
corpus, index, write, run, check, request = srv.corpus, srv.index, srv.write, srv.run, srv.check, srv.request

write("guide.md", "# Guide\n\nIntro line.\n\n## Reset\n\nHold the MX-200 reset button.\nCount to five.\n")
write("ora.md", "# Errors\n\n## ORA-01555\n\nSnapshot too old: increase the undo retention.\n")
write("hr/pay.md", "---\ngroups: [hr]\n---\n# Pay\n\nSalaries of MX-200 engineers are secret.\n")
run("index", corpus, "--out", index)
HR = "tok-hr-0123456789abcdef"
with open(os.path.join(work, "tokens.tsv"), "w") as f:
    f.write("# token<TAB>groups\n" + HR + "\thr\n")

first = srv.start("--threads", "4", "--tokens", os.path.join(work, "tokens.tsv"), "--max-body", "100000")
server, port, log = srv.server, srv.port, srv.log


def no_nonce(j):
    # The nonce is drawn per call, and the line telling the model how to reopen a source
    # is each interface's own.
    s = json.dumps(j, sort_keys=True)
    out = json.loads(s.replace(j["evidence"]["nonce"], "NONCE")) if "evidence" in j else j
    if "evidence" in out:
        out["evidence"]["prompt"] = re.sub(r"To read more of a source than its passage, or its file as it reads now, [^\n]*",
                                           "REOPEN", out["evidence"]["prompt"])
    return out


check("loopback only" in first, "says it binds to loopback: " + first)


def raw_exchange(data, wait=20):
    """Sends bytes as they are and returns all the server sends until it closes."""
    with socket.create_connection(("127.0.0.1", port), timeout=wait) as sk:
        sk.sendall(data)
        got = b""
        while True:
            chunk = sk.recv(65536)
            if not chunk:
                return got
            got += chunk


# A client that sends half a request and then nothing: every request is bounded in time
# (10 s), so the server closes the connection (watched in the background meanwhile).
slow_result = []


def slow_client():
    import time
    t0 = time.monotonic()
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=60) as sk:
            sk.sendall(b"POST /search HTTP/1.1\r\nHost: x\r\nContent-Length: 50\r\n\r\n{\"query\"")
            while sk.recv(65536):
                pass
        slow_result.append(time.monotonic() - t0)
    except Exception as e:  # noqa: BLE001
        slow_result.append(repr(e))


slow = threading.Thread(target=slow_client)
slow.start()
status, j, _ = request("GET", "/health")
check(status == 200 and j == {"status": "ok", "generation": 1}, "health")
status, j, r = request("POST", "/search", {"query": "MX-200 reset", "k": 3})
cli_json = json.loads(run("search", index, "MX-200 reset", "--k", "3", "--json"))
check(status == 200 and j == cli_json, "POST /search is ragpp search --json")
# Written straight from the results, the body is the command's JSON compacted, to the byte.
check(r.text == json.dumps(cli_json, separators=(",", ":"), ensure_ascii=False),
      "the body is ragpp search --json, compact: " + r.text[:200])
q = "How long to hold the MX-200 reset button?"
status, j, _ = request("POST", "/ask", {"question": q})
check(status == 200 and no_nonce(j) == no_nonce(json.loads(run("ask", index, q, "--json"))), "POST /ask is ragpp ask --json")
check("or its file as it reads now, ask GET /get?source=PATH:LINE with the path:line of its citation.\n"
      in j["evidence"]["prompt"], "the evidence tells the model to reopen a source with GET /get")
status, j, _ = request("POST", "/ask", {"question": "What does the QUUXFROB widget do?"})
check(status == 200 and j["answered"] is False and j["reasons"], "ask refuses, with reasons")

# Tokens: none reads unlabelled notes; hr's reads hr's; an unknown one is refused.
status, j, _ = request("POST", "/search", {"query": "salaries secret"})
check(all(not r["id"].startswith("hr/") for r in j["results"]), "no token: no hr note")
status, j, _ = request("POST", "/search", {"query": "salaries secret"}, token=HR)
check(j["results"][0]["id"] == "hr/pay.md:4", "hr token: the hr note")
check(j == json.loads(run("search", index, "salaries secret", "--as", "hr", "--json")), "as ragpp search --as hr")
status, j, r = request("POST", "/search", {"query": "x"}, token="tok-unknown-0123456789")
check(status == 401 and r.getheader("WWW-Authenticate") == "Bearer" and "unknown token" in j["error"], "unknown token: 401")
status, j, _ = request("GET", "/health", headers={"Authorization": "Basic eDp5"})
check(status == 200, "health needs no token")
status, j, _ = request("POST", "/search", {"query": "x"}, headers={"Authorization": "Basic eDp5"})
check(status == 401, "not a bearer token: 401")

# The client's mistakes.
for body, says in [("{\"query\": ", "malformed JSON"), ("[1]", "JSON object"), ("{\"query\": 1}", "'query' must be a string"),
                   ("{\"k\": 3}", "'query' is required"), ("{\"query\": \"x\", \"k\": 0}", "'k' must be an integer"),
                   ("{\"query\": \"x\", \"as\": \"hr\"}", "unknown field 'as'"),
                   ("{\"query\": \"x\", \"mode\": \"psychic\"}", "psychic"),
                   ("{\"query\": \"x\", \"filter\": \"version>>2\"}", "version")]:
    status, j, _ = request("POST", "/search", raw=body)
    check(status == 400 and says in j["error"], f"400 naming {says!r} for {body}: {status} {j}")
status, j, _ = request("POST", "/search", raw=json.dumps({"query": "x" * 200000}))
check(status == 413, f"a body over --max-body: 413, not {status}")
status, j, _ = request("GET", "/nowhere")
check(status == 404 and "no such endpoint" in j["error"], "unknown endpoint: 404")

# HTTP itself: an unreadable request line, two requests in one write (pipelined), HEAD,
# and a client that asks before sending its body (Expect: 100-continue, as curl does).
got = raw_exchange(b"NOT HTTP AT ALL\r\n\r\n")
check(got.startswith(b"HTTP/1.1 400") and b"bad request" in got, f"garbage: 400 and the connection closed: {got[:200]!r}")
got = raw_exchange(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\nGET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
check(got.count(b"HTTP/1.1 200") == 2 and got.count(b'"status":"ok"') == 2, f"two pipelined requests, two replies: {got!r}")
status, j, r = request("HEAD", "/health")
check(status == 200 and j is None and int(r.getheader("Content-Length")) > 0, "HEAD /health: the headers alone")
big_query = "MX-200 reset " + " ".join(f"word{i}" for i in range(300))
got = raw_exchange(("POST /search HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nExpect: 100-continue\r\n"
                    f"Connection: close\r\nContent-Length: {len(json.dumps({'query': big_query}))}\r\n\r\n").encode()
                   + json.dumps({"query": big_query}).encode())
check(got.startswith(b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200") and b'"results":[' in got,
      f"Expect: 100-continue, then the reply: {got[:120]!r}")

# get: the section now; another reader's note is not there; a deleted file is gone.
status, j, _ = request("GET", "/get?source=guide.md:5")
check(status == 200 and j == json.loads(run("get", index, "guide.md:5", "--json")), "GET /get is ragpp get --json")
status, j, _ = request("GET", "/get?source=guide.md&lines=1-3")
check(status == 200 and j["text"] == "# Guide\n\nIntro line.", "GET /get with lines")
status, j, _ = request("GET", "/get?source=hr/pay.md")
check(status == 404 and "no source 'hr/pay.md'" in j["error"], "hr note: 404 without the token")
status, j, _ = request("GET", "/get?source=hr/pay.md", token=HR)
check(status == 200 and "Salaries" in j["text"], "hr note with the token")
status, j, _ = request("GET", "/get")
check(status == 400, "get without source: 400")

# MCP over HTTP (Streamable HTTP: JSON replies).
init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "py", "version": "0"}}}
status, j, _ = request("POST", "/mcp", init)
check(status == 200 and j["result"]["protocolVersion"] == "2025-06-18", "mcp initialize over HTTP")
status, j, _ = request("POST", "/mcp", {"jsonrpc": "2.0", "method": "notifications/initialized"})
check(status == 202 and j is None, "a notification: 202, no body")
call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "search", "arguments": {"query": "salaries secret"}}}
status, j, _ = request("POST", "/mcp", call, token=HR)
check(j["result"]["structuredContent"]["results"][0]["id"] == "hr/pay.md:4", "mcp: the token's reader")
status, j, _ = request("POST", "/mcp", call)
check(all(not r["id"].startswith("hr/") for r in j["result"]["structuredContent"]["results"]), "mcp: no token, no hr note")
status, j, _ = request("POST", "/mcp", call, headers={"Origin": "http://evil.example"})
check(status == 403, "mcp: a foreign Origin is refused")
status, j, _ = request("GET", "/mcp")
check(status == 405, "mcp: no event stream (405)")

# curl, another client.
if shutil.which("curl"):
    out = subprocess.run(["curl", "-s", "-H", "Authorization: Bearer " + HR, "--data", json.dumps({"query": "salaries secret"}),
                          f"http://127.0.0.1:{port}/search"], capture_output=True, text=True, timeout=20).stdout
    check(json.loads(out) == json.loads(run("search", index, "salaries secret", "--as", "hr", "--json")), "curl: the same JSON")

# Concurrent requests while ragpp index commits three generations: none fails.
failures, done = [], []


def client(n):
    for i in range(25):
        try:
            status, j, _ = request("POST", "/search", {"query": "reset button MX-200", "k": 2})
            if status != 200 or not j["results"]:
                failures.append((status, j))
        except Exception as e:  # noqa: BLE001 - any failure counts
            failures.append(repr(e))
    done.append(n)


threads = [threading.Thread(target=client, args=(n,)) for n in range(8)]
for t in threads:
    t.start()
for g in range(3):
    write(f"new{g}.md", f"# New {g}\n\n## Part\n\nWord{g}zebra appears here.\n")
    run("index", corpus, "--out", index)
for t in threads:
    t.join(timeout=120)
check(len(done) == 8 and not failures, f"200 requests while re-indexing: {len(failures)} failed: {failures[:3]}")
for _ in range(40):  # the watcher opens a new generation within a quarter of a second
    status, j, _ = request("GET", "/health")
    if j["generation"] == 4:
        break
    threading.Event().wait(0.1)
check(j["generation"] == 4, f"the last generation is served: {j}")
status, j, _ = request("POST", "/search", {"query": "word2zebra"})
check(j["results"] and j["results"][0]["id"] == "new2.md:3", "a note indexed while serving is found")

# The listen backlog: cpp-httplib's is 5, which dropped the handshakes of 32 clients
# connecting at once (bench_serve); ragpp serve raises it to the system's maximum. ss
# (iproute2) shows a listening socket's backlog as its Send-Q.
if shutil.which("ss"):
    out = subprocess.run(["ss", "-ltnH", f"sport = :{port}"], capture_output=True, text=True, timeout=20).stdout.split()
    with open("/proc/sys/net/core/somaxconn") as f:
        somaxconn = int(f.read())
    check(len(out) >= 3 and int(out[2]) == somaxconn, f"the listen backlog is somaxconn ({somaxconn}): ss says {out}")
else:  # outside CI a note; in CI (scripts/test.sh installs iproute2) a failure
    check(not os.environ.get("CI"), "ss (iproute2) is not installed: the listen backlog cannot be checked")
    print("note: ss (iproute2) is not installed: the listen backlog is not checked")

# A deletion: 410 Gone.
os.remove(os.path.join(corpus, "ora.md"))
status, j, _ = request("GET", "/get?source=ora.md:3")
check(status == 410 and j["deleted"] is True, "a deleted source: 410")

slow.join(timeout=40)
check(slow_result and isinstance(slow_result[0], float) and 9 <= slow_result[0] <= 20,
      f"half a request: closed after the 10 s bound: {slow_result}")

# SIGTERM under load: the requests in flight are answered (the last with Connection:
# close), idle connections end with an end of stream, never a reset or half a reply.
import http.client  # noqa: E402
ends, bad, answered = [], [], []
first_replies = [threading.Event() for _ in range(4)]


def loader(n):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=20)
    for _ in range(100000):  # bounded; ends at the server's stop
        try:
            c.request("POST", "/search", body=json.dumps({"query": "reset button MX-200", "k": 2}),
                      headers={"Content-Type": "application/json"})
            r = c.getresponse()
            json.loads(r.read())
            answered.append(1)
            first_replies[n].set()
            if r.getheader("Connection", "").lower() == "close":
                ends.append("Connection: close")
                return
        except http.client.RemoteDisconnected as e:
            ends.append(type(e).__name__)
            return
        except Exception as e:  # noqa: BLE001 - a reset, half a reply, a timeout
            bad.append(repr(e))
            return
        finally:
            first_replies[n].set()  # (an error: no more waiting for this one)


loaders = [threading.Thread(target=loader, args=(n,)) for n in range(4)]
for t in loaders:
    t.start()
# Each client has been answered once, so its connection was accepted (a connection still
# in the listen queue when the server stops is reset by the kernel, as with any server).
for e in first_replies:
    e.wait(timeout=30)
server.send_signal(signal.SIGTERM)
for t in loaders:
    t.join(timeout=40)
check(not bad and len(ends) == 4 and answered, f"SIGTERM under load: {len(answered)} answered, ends {ends}, bad {bad}")
rc = server.wait(timeout=20)
check(rc == 0, f"SIGTERM: exit 0, not {rc}")
check(any("SIGTERM" in l for l in log), "says it finishes the requests in flight")
# Out of file descriptors: a server allowed 64 (soft and hard, so that it cannot raise
# them) and 100 clients connected. Accepting must not spin meanwhile (it waits 0.1 s
# between tries, and says so once), and it serves again once clients leave.
# (Not in a sanitizer build: UBSan checks that memory is readable through a pipe, which it
# cannot open when the process has no descriptor left, and then reports a bad vptr.)
if os.environ.get("RAGPP_SANITIZED"):
    print("note: the out-of-descriptors check runs in the release build only")
else:
    import resource  # noqa: E402
    import time  # noqa: E402


    def few_fds():
        resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))


    tight = subprocess.Popen([ragpp, "serve", index, "--port", "0", "--threads", "2"], stderr=subprocess.PIPE, text=True,
                             preexec_fn=few_fds)
    tight_port = int(tight.stderr.readline().split("http://127.0.0.1:")[1].split(" ")[0])
    held = [socket.create_connection(("127.0.0.1", tight_port), timeout=10) for _ in range(100)]
    time.sleep(0.5)


    def cpu_ticks(pid):
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])


    before = cpu_ticks(tight.pid)
    time.sleep(1.5)
    spent = cpu_ticks(tight.pid) - before
    check(spent < 30, f"out of descriptors: no spinning ({spent} ticks of CPU in 1.5 s)")
    for sk in held[:60]:
        sk.close()
    c = http.client.HTTPConnection("127.0.0.1", tight_port, timeout=20)
    c.request("GET", "/health")
    r = c.getresponse()
    check(r.status == 200 and json.loads(r.read())["status"] == "ok", "serves again once descriptors are free")
    c.close()
    for sk in held[60:]:
        sk.close()
    tight.send_signal(signal.SIGTERM)
    tight_err = tight.stderr.read()
    check(tight.wait(timeout=20) == 0 and "cannot accept connections: Too many open files" in tight_err,
          f"says it, once, and exits 0 at SIGTERM: {tight_err}")
    check(tight_err.count("cannot accept") == 1, "said once")

print(f"serve http: {srv.checks} checks passed")
