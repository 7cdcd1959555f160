"""A fake OpenAI chat-completions server whose failures can be switched at runtime.

A real HTTP server on 127.0.0.1 (stdlib, one thread per request). Its answers are computed from
the request: it finds the responses in the last user message (sections `### Response k` ...
`### End of response k`, the format of setrl.judge.openai_judge) and clusters them with the ast
judge, answering {"1": {"chain_of_thought": "...", "cluster_id": int}, ...}.

In a test (thread):

    with FakeChatServer() as server:                 # random free port
        spec = JudgeSpec(name="fake", kind="openai", model="fake", base_url=server.url)
        server.control(mode="503", count=3)           # the next 3 requests get 503, then normal
        server.stats()["requests"]

As a process (end-to-end tests):

    python -m tests.support.fake_chat_server --port 8123      # prints "listening on <base_url>"
    control("http://127.0.0.1:8123", mode="down")             # helpers below, or plain HTTP
    stats("http://127.0.0.1:8123")

Kill the process for a real "connection refused"; in a thread, `server.stop()` does the same and
`server.start()` brings it back on the same port.

HTTP control API (JSON bodies):
  POST /v1/chat/completions   (also /chat/completions) the chat endpoint; counted in stats
  GET  /v1/models             one model, "fake-judge"
  POST /control               {"mode": M, "count": K, "after": A, "seconds": S}
        mode   ok          answer normally
               503 | 500 | 502 | 429   that HTTP status with an OpenAI-style error body
               hang        sleep S seconds (default 30) before answering: past the client's timeout
               malformed   an answer that is not JSON
               incomplete  valid JSON cut in half (finish_reason "length")
               wrong_keys  one key short (N-1 keys; N=1 gets an extra key "2")
               non_int     cluster ids as strings ("0")
               down        close the connection without answering (the client sees a connection error)
        count  how many chat requests the mode applies to, then it reverts to ok (omit/null: until changed)
        after  let this many chat requests through normally first (e.g. {"mode": "down", "after": 3}
               = the server goes down mid-batch after 3 answers)
        Returns the new state. /control does not count as a request.
  POST /reset                 mode ok, all counters zero
  GET  /stats                 {"requests": chat requests received, "answered": answered normally,
                               "faults": requests given a fault, "by_outcome": {outcome: n},
                               "mode", "count" (left, null = unlimited), "after" (left)}
"""

from __future__ import annotations

import argparse
import json
import re
import socket
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from setrl.judge.ast_judge import AstJudge
from setrl.problem import Problem

FAULTS = {"ok", "503", "500", "502", "429", "hang", "malformed", "incomplete", "wrong_keys", "non_int", "down"}
_RESPONSE = re.compile(r"### Response (\d+)\n(.*?)\n### End of response \1", re.S)
_PROBLEM = Problem(source="fake", title="", prompt="", entry_point="", test_style="check", tests="")


def answer_for(messages: list[dict]) -> dict:
    """The correct judge answer for a chat request: the ast judge's clustering of its responses."""
    user = next((m.get("content") or "" for m in reversed(messages) if m.get("role") == "user"), "")
    found = sorted(((int(i), body) for i, body in _RESPONSE.findall(user)), key=lambda x: x[0])
    responses = [body for _, body in found]
    c = AstJudge("fake").cluster(_PROBLEM, responses)
    return {str(i): {"chain_of_thought": r, "cluster_id": cid}
            for i, (cid, r) in enumerate(zip(c.cluster_ids, c.rationales), 1)}


class _State:
    def __init__(self):
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.reset()

    def reset(self) -> None:
        self.mode, self.count, self.after, self.seconds = "ok", None, 0, 30.0
        self.requests = self.answered = self.faults = 0
        self.by_outcome: dict[str, int] = {}

    def set(self, mode: str = "ok", count: int | None = None, after: int = 0, seconds: float = 30.0) -> dict:
        if mode not in FAULTS:
            raise ValueError(f"unknown mode '{mode}'; valid: {', '.join(sorted(FAULTS))}")
        with self.lock:
            self.mode, self.count, self.after, self.seconds = mode, count, int(after or 0), float(seconds)
        return self.snapshot()

    def take(self) -> tuple[str, float]:
        """Count one chat request and decide its fate."""
        with self.lock:
            self.requests += 1
            mode = self.mode
            if self.after > 0:
                self.after -= 1
                mode = "ok"
            elif mode != "ok" and self.count is not None:
                self.count -= 1
                if self.count <= 0:
                    self.mode, self.count = "ok", None
            if mode == "ok":
                self.answered += 1
            else:
                self.faults += 1
            self.by_outcome[mode] = self.by_outcome.get(mode, 0) + 1
            return mode, self.seconds

    def snapshot(self) -> dict:
        with self.lock:
            return {"requests": self.requests, "answered": self.answered, "faults": self.faults,
                    "by_outcome": dict(self.by_outcome), "mode": self.mode, "count": self.count, "after": self.after}


class _Handler(BaseHTTPRequestHandler):
    server_version = "FakeChat/1.0"

    def log_message(self, *args) -> None:  # keep test output clean
        pass

    @property
    def state(self) -> _State:
        return self.server.state

    def _send(self, status: int, body: dict | str) -> None:
        data = (body if isinstance(body, str) else json.dumps(body)).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (timeout) before we answered

    def _body(self) -> dict:
        n = int(self.headers.get("Content-Length") or 0)
        return json.loads(self.rfile.read(n) or b"{}")

    def do_GET(self) -> None:
        if self.path == "/stats":
            self._send(200, self.state.snapshot())
        elif self.path.rstrip("/").endswith("/models"):
            self._send(200, {"object": "list", "data": [{"id": "fake-judge", "object": "model", "owned_by": "tests"}]})
        else:
            self._send(404, {"error": {"message": f"no route {self.path}"}})

    def do_POST(self) -> None:
        if self.path == "/control":
            try:
                self._send(200, self.state.set(**self._body()))
            except (TypeError, ValueError) as e:
                self._send(400, {"error": {"message": str(e)}})
        elif self.path == "/reset":
            with self.state.lock:
                self.state.reset()
            self._send(200, self.state.snapshot())
        elif self.path.rstrip("/") in ("/v1/chat/completions", "/chat/completions"):
            self._chat(self._body())
        else:
            self._send(404, {"error": {"message": f"no route {self.path}"}})

    def _chat(self, req: dict) -> None:
        mode, seconds = self.state.take()
        if mode == "down":
            self.close_connection = True
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            return
        if mode in ("503", "500", "502", "429"):
            self._send(int(mode), {"error": {"message": f"fake {mode}", "type": "server_error", "code": mode}})
            return
        if mode == "hang" and self.state.stopping.wait(seconds):
            return
        answer = answer_for(req.get("messages") or [])
        finish = "stop"
        if mode == "malformed":
            content = "Sure! Response 1 uses a loop, so it is cluster 0; the others are similar."
        elif mode == "incomplete":
            full = json.dumps(answer)
            content, finish = full[: len(full) // 2], "length"
        elif mode == "wrong_keys":
            if len(answer) > 1:
                answer.pop(str(len(answer)))
            else:
                answer["2"] = {"chain_of_thought": "extra", "cluster_id": 0}
            content = json.dumps(answer)
        elif mode == "non_int":
            content = json.dumps({k: {**v, "cluster_id": str(v["cluster_id"])} for k, v in answer.items()})
        else:
            content = json.dumps(answer)
        prompt_chars = sum(len(m.get("content") or "") for m in req.get("messages") or [])
        usage = {"prompt_tokens": prompt_chars // 4, "completion_tokens": len(content) // 4}
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        self._send(200, {
            "id": f"chatcmpl-fake-{self.state.requests}", "object": "chat.completion", "created": int(time.time()),
            "model": req.get("model", "fake-judge"),
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": finish}],
            "usage": usage,
        })


class FakeChatServer:
    """The server in a background thread. `url` is the base_url for the openai client."""

    def __init__(self, port: int = 0, host: str = "127.0.0.1"):
        self.host, self.port = host, port
        self.state = _State()
        self._httpd: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    def start(self) -> "FakeChatServer":
        self.state.stopping.clear()
        self._httpd = ThreadingHTTPServer((self.host, self.port), _Handler)
        self._httpd.daemon_threads = True
        self._httpd.state = self.state
        self.port = self._httpd.server_address[1]  # keep the port: stop() then start() reuses it
        threading.Thread(target=self._httpd.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        """Stop listening: new connections are refused until start()."""
        if self._httpd is not None:
            self.state.stopping.set()
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def control(self, mode: str = "ok", count: int | None = None, after: int = 0, seconds: float = 30.0) -> dict:
        return self.state.set(mode, count, after, seconds)

    def stats(self) -> dict:
        return self.state.snapshot()

    def reset(self) -> dict:
        with self.state.lock:
            self.state.reset()
        return self.state.snapshot()

    def __enter__(self) -> "FakeChatServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def _http(url: str, method: str = "GET", body: dict | None = None) -> dict:
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as r:
        return json.loads(r.read())


def control(server: str, **kw) -> dict:
    """POST /control to a server at `server` (http://host:port, with or without /v1)."""
    return _http(server.removesuffix("/v1").rstrip("/") + "/control", "POST", kw)


def stats(server: str) -> dict:
    return _http(server.removesuffix("/v1").rstrip("/") + "/stats")


def main() -> None:
    ap = argparse.ArgumentParser(description="Fake OpenAI chat-completions judge server (see module docstring).")
    ap.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (0 = pick a free one)")
    ap.add_argument("--host", default="127.0.0.1")
    args = ap.parse_args()
    server = FakeChatServer(args.port, args.host).start()
    print(f"listening on {server.url}", flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        server.stop()


if __name__ == "__main__":
    main()
