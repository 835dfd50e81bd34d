#!/usr/bin/env python3
"""A kube-scheduler extender for schedlab's `--arms extender:URL`, in the
Python standard library only.

Policy (deterministic and stateless, so a run's records reproduce from its
seed): rendezvous hashing by workload. Every node gets a stable
pseudo-random rank for each workload (SHA-256 of workload and node name);
prioritize scores a workload's best-ranked node 10 and its worst 0. Pods of
one workload gather on the same few nodes (warm image caches), different
workloads prefer different nodes (spread). Filter keeps every node but those
named in --avoid.

    python3 examples/extender.py --port 8888
    schedlab scenario churn --arms default,extender:http://127.0.0.1:8888

Flags for testing the lab's handling of a faulty extender:
  --delay SECONDS     sleep this long before every answer (past the arm's
                      timeout, the lab refuses the extender or the attempt)
  --fail-after N      after N filter calls, hang up on every request
                      without answering (an extender that stops answering)

With --port 0 it picks a free port. Either way its first line on standard
output is "listening on http://127.0.0.1:PORT".
"""

import argparse
import hashlib
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

WORKLOAD_LABEL = "schedlab.io/workload"
MAX_EXTENDER_PRIORITY = 10


def workload_of(pod):
    labels = (pod or {}).get("metadata", {}).get("labels") or {}
    # a pod without the lab's label is its own workload
    return labels.get(WORKLOAD_LABEL) or (pod or {}).get("metadata", {}).get("name", "")


def rank(workload, node):
    digest = hashlib.sha256(f"{workload}/{node}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


def prioritize(pod, names):
    """Scores 0..10 by each node's rank for the pod's workload among `names`."""
    workload = workload_of(pod)
    ordered = sorted(names, key=lambda n: (rank(workload, n), n))
    if len(ordered) <= 1:
        return [{"Host": n, "Score": MAX_EXTENDER_PRIORITY} for n in ordered]
    last = len(ordered) - 1
    return [
        {"Host": n, "Score": (MAX_EXTENDER_PRIORITY * i) // last}
        for i, n in enumerate(ordered)
    ]


def filter_nodes(names, avoid):
    kept = [n for n in names if n not in avoid]
    failed = {n: "avoided by the example extender" for n in names if n in avoid}
    return {"Nodes": None, "NodeNames": kept, "FailedNodes": failed, "FailedAndUnresolvableNodes": {}, "Error": ""}


class Handler(BaseHTTPRequestHandler):
    settings = None
    lock = threading.Lock()
    filter_calls = 0

    def log_message(self, fmt, *args):
        # quiet: the lab's tests read standard output for the port
        pass

    def do_POST(self):
        s = self.settings
        verb = self.path.rstrip("/").rsplit("/", 1)[-1]
        if verb == "filter":
            with Handler.lock:
                Handler.filter_calls += 1
                calls = Handler.filter_calls
        else:
            calls = Handler.filter_calls
        if s.fail_after is not None and calls > s.fail_after:
            # hang up without an answer
            self.close_connection = True
            return
        length = int(self.headers.get("Content-Length") or 0)
        try:
            args = json.loads(self.rfile.read(length) or b"{}")
        except json.JSONDecodeError as e:
            self.answer(400, {"Error": f"not JSON: {e}"})
            return
        names = args.get("NodeNames") or []
        pod = args.get("Pod")
        if s.delay > 0:
            time.sleep(s.delay)
        if verb == "filter":
            self.answer(200, filter_nodes(names, s.avoid))
        elif verb == "prioritize":
            self.answer(200, prioritize(pod, names))
        else:
            self.answer(404, {"Error": f"no verb {verb!r}: this extender answers filter and prioritize"})

    def answer(self, status, body):
        data = json.dumps(body).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            # the lab gave up waiting (its timeout)
            pass


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8888)
    parser.add_argument("--avoid", default="", help="comma-separated node names the filter drops")
    parser.add_argument("--delay", type=float, default=0.0, help="seconds to sleep before every answer")
    parser.add_argument("--fail-after", type=int, default=None, help="hang up on every request after N filter calls")
    settings = parser.parse_args()
    settings.avoid = {n for n in settings.avoid.split(",") if n}
    Handler.settings = settings
    server = ThreadingHTTPServer((settings.host, settings.port), Handler)
    server.daemon_threads = True
    print(f"listening on http://{settings.host}:{server.server_address[1]}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
