"""What the tests of ragpp serve share (serve_http.py, serve_watch.py): a work folder with
a corpus, the ragpp binary run to completion, the server started on a free loopback port
with its stderr collected, checks that stop the server on failure, and one HTTP request
through Python's http.client."""
import http.client
import json
import os
import shutil
import subprocess
import sys
import threading


class Served:
    def __init__(self, ragpp, work, folders=()):
        self.ragpp, self.work = ragpp, work
        self.corpus, self.index = os.path.join(work, "corpus"), os.path.join(work, "index")
        shutil.rmtree(work, ignore_errors=True)
        os.makedirs(self.corpus)
        for f in folders:
            os.makedirs(os.path.join(self.corpus, f))
        self.server, self.port, self.first, self.log, self.checks = None, None, "", [], 0

    def write(self, rel, text):
        with open(os.path.join(self.corpus, rel), "w", encoding="utf-8") as f:
            f.write(text)

    def run(self, *args):
        return subprocess.run([self.ragpp, *args], check=True, capture_output=True, text=True, timeout=60).stdout

    def start(self, *args):
        """ragpp serve INDEX --port 0 ARGS; returns the first line it printed (after which
        the rest of stderr is collected in self.log)."""
        self.server = subprocess.Popen([self.ragpp, "serve", self.index, "--port", "0", *args],
                                       stderr=subprocess.PIPE, text=True)
        self.first = self.server.stderr.readline()
        self.port = int(self.first.split("http://127.0.0.1:")[1].split(" ")[0])
        threading.Thread(target=lambda: self.log.extend(self.server.stderr), daemon=True).start()
        return self.first

    def check(self, cond, what):
        if not cond:
            self.server.kill()
            print("FAILED:", what, "\nserver said:", self.first, "".join(self.log))
            sys.exit(1)
        self.checks += 1

    def request(self, method, path, body=None, token=None, headers=None, raw=None):
        """(status, the JSON body or None, the response)."""
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=20)
        h = dict(headers or {})
        if token:
            h["Authorization"] = "Bearer " + token
        data = raw if raw is not None else (json.dumps(body) if body is not None else None)
        if data is not None:
            h["Content-Type"] = "application/json"
        c.request(method, path, body=data, headers=h)
        r = c.getresponse()
        text = r.read().decode()
        r.text = text  # the body as sent
        c.close()
        return r.status, (json.loads(text) if text else None), r
