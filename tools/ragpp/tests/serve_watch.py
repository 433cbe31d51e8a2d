#!/usr/bin/env python3
"""ragpp serve --watch on a real folder, queried with Python's http.client: a file added,
edited and deleted, and a .ragpp-contexts rule written, each served after a re-index the
server makes itself (a new generation in /health), with no request failing meanwhile;
a ragpp index run by hand beside it; then SIGTERM.
Usage: serve_watch.py RAGPP WORK. Prints "serve watch: N checks passed" when all passed."""
import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve_support import Served  # noqa: E402

ragpp, work = sys.argv[1], sys.argv[2]
srv = Served(ragpp, work, ["contracts"])
corpus, index, write, check = srv.corpus, srv.index, srv.write, srv.check
write("guide.md", "# Guide\n\nHold the reset button.\n")
write("contracts/mx200.md", "# Notice\n\nThree months notice, by registered letter.\n")
srv.run("index", corpus, "--out", index, "--quiet")
srv.start("--threads", "4", "--watch", "--watch-interval", "0.2")


def request(method, path, body=None):
    status, j, _ = srv.request(method, path, body)
    return status, j


def ids(query):
    status, j = request("POST", "/search", {"query": query, "k": 5, "mode": "bm25"})
    check(status == 200, "search answers 200 while watching: %s" % j)
    return [r["id"] for r in j["results"]]


def generation():
    return request("GET", "/health")[1]["generation"]


def until(cond, what, seconds=20):
    """Polls cond() (bounded: at most `seconds`)."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if cond():
            return
        time.sleep(0.05)
    check(False, "within %d s: %s" % (seconds, what))


until(lambda: any("watching " + corpus in l for l in srv.log), "says what it watches")
g0 = generation()
check(ids("quokka") == [], "no quokka yet")
write("zoo.md", "# Zoo\n\nThe quokka lives on Rottnest Island.\n")
until(lambda: ids("quokka") == ["zoo.md:1"], "an added file is served")
g1 = generation()
check(g1 > g0, "a new generation for the added file")
write("zoo.md", "# Zoo\n\nThe wombat digs burrows.\n")
until(lambda: ids("wombat") == ["zoo.md:1"] and ids("quokka") == [], "an edit is served")
# Contexts: a rule written at the corpus root re-indexes the files it names.
write(".ragpp-contexts", "contracts/: agreements with Globex\n")
until(lambda: ids("Globex") == ["contracts/mx200.md:1"], "a contexts rule is served")
os.remove(os.path.join(corpus, "zoo.md"))
until(lambda: ids("wombat") == [], "a deletion is served")
# A ragpp index by hand beside the watcher: the folder's lock serialises them.
write("late.md", "# Late\n\nThe platypus lays eggs.\n")
subprocess.run([ragpp, "index", corpus, "--out", index, "--quiet"], capture_output=True, timeout=60)
until(lambda: ids("platypus") == ["late.md:1"], "a file indexed by hand or by the watcher is served")
# Nothing changed: no new generation.
time.sleep(0.2)
g = generation()
time.sleep(1.0)
check(generation() == g, "no generation while nothing changes")
check(any("re-indexed: 1 added" in l for l in srv.log), "the re-index is said on stderr")

srv.server.send_signal(signal.SIGTERM)
try:
    rc = srv.server.wait(timeout=30)
except subprocess.TimeoutExpired:
    srv.server.kill()
    rc = -1
check(rc == 0, "SIGTERM: exit 0 (got %s)" % rc)
print("serve watch: %d checks passed" % srv.checks)
