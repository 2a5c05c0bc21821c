"""A fake client-go exec credential plugin (a small Python script made executable) and a tiny
local API server, for tests of kubeconfig exec credentials.

The plugin reads what to do from ``plugin-spec.json`` in its own folder and appends one line per
run to ``runs.jsonl`` there (its arguments, ``KUBERNETES_EXEC_INFO``, chosen variables), so a
test can see exactly how it was called and how often.
"""

from __future__ import annotations

import datetime
import http.server
import json
import ssl
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import yaml

PLUGIN = r'''#!{python}
import json, os, subprocess, sys, time
here = os.path.dirname(os.path.abspath(__file__))
spec = json.load(open(os.path.join(here, "plugin-spec.json")))
runs = os.path.join(here, "runs.jsonl")
with open(runs, "a") as f:
    f.write(json.dumps({{
        "argv": sys.argv[1:],
        "info": os.environ.get("KUBERNETES_EXEC_INFO"),
        "env": {{k: os.environ.get(k) for k in spec.get("show_env", [])}},
    }}) + "\n")
n = sum(1 for _ in open(runs))
mode = spec.get("mode", "ok")
if mode == "hang":
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(1000)"])
    open(os.path.join(here, "pids"), "w").write(f"{{os.getpid()}} {{child.pid}}")
    time.sleep(1000)
if mode == "daemon":  # a background helper that keeps our stdout and stderr open
    helper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(1000)"], start_new_session=True)
    open(os.path.join(here, "daemon.pid"), "w").write(str(helper.pid))
if mode == "fail":
    sys.stderr.write(spec["stderr"])
    sys.exit(spec["code"])
if mode == "raw":
    sys.stdout.write(spec["stdout"])
    sys.exit(0)
if mode == "flood":
    sys.stdout.write("x" * (2 * 1024 * 1024))
    sys.exit(0)
status = {{k: (v.format(n=n) if isinstance(v, str) else v) for k, v in spec["status"].items()}}
print(json.dumps({{"apiVersion": spec["apiVersion"], "kind": "ExecCredential", "status": status}}))
'''

V1 = "client.authentication.k8s.io/v1"
V1BETA1 = "client.authentication.k8s.io/v1beta1"


class FakePlugin:
    """The script at ``path``; ``spec(...)`` says what its next runs do."""

    def __init__(self, folder: Path, name: str = "fake-plugin") -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.folder = folder
        self.path = folder / name
        self.path.write_text(PLUGIN.format(python=sys.executable))
        self.path.chmod(0o755)
        self.spec(status={"token": "tok-{n}"})

    def spec(self, *, api_version: str = V1, mode: str = "ok", **fields: Any) -> None:
        doc = {"apiVersion": api_version, "mode": mode, **fields}
        (self.folder / "plugin-spec.json").write_text(json.dumps(doc))

    def runs(self) -> list[dict[str, Any]]:
        f = self.folder / "runs.jsonl"
        return [json.loads(line) for line in f.read_text().splitlines()] if f.exists() else []


def write_kubeconfig(
    path: Path,
    *,
    server: str = "https://127.0.0.1:6443",
    user: dict[str, Any],
    cluster_extra: dict[str, Any] | None = None,
) -> Path:
    doc = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "c", "cluster": {"server": server, **(cluster_extra or {})}}],
        "users": [{"name": "u", "user": user}],
        "contexts": [{"name": "ctx", "context": {"cluster": "c", "user": "u"}}],
        "current-context": "ctx",
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(doc))
    return path


class FixedClock:
    """An injected clock for credential expiry."""

    def __init__(self, now: datetime.datetime) -> None:
        self.now = now

    def __call__(self) -> datetime.datetime:
        return self.now


Handler = Callable[[http.server.BaseHTTPRequestHandler], tuple[int, dict[str, Any]]]


@contextmanager
def local_server(respond: Handler, tls: ssl.SSLContext | None = None) -> Iterator[str]:
    """An HTTP(S) server on 127.0.0.1 answering every GET with ``respond(handler)``; yields its URL."""

    class _H(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep connections alive, as the API server does

        def do_GET(self) -> None:
            code, body = respond(self)
            data = json.dumps(body).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _H)
    if tls is not None:
        srv.socket = tls.wrap_socket(srv.socket, server_side=True)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    try:
        scheme = "https" if tls is not None else "http"
        yield f"{scheme}://127.0.0.1:{srv.server_address[1]}"
    finally:
        srv.shutdown()
        srv.server_close()
