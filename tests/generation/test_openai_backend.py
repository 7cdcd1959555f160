"""The OpenAI-compatible backend against a real local HTTP server, called by the real `openai` client."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from setrl.config import ModelConfig
from setrl.generation import OpenAIGenerator, make_generator


class FakeCompletionsServer:
    """A minimal `/v1/completions` endpoint in the shape vLLM answers (incl. `token_ids`).

    Choice i for a prompt is "<prompt[-3:]>|<seed>|<i>", and it "hits the length limit" when
    max_tokens < 4. `fail_first` answers that many requests with 503 to exercise client retries."""

    def __init__(self, with_token_ids: bool = True, fail_first: int = 0):
        self.requests: list[dict] = []
        self.fail_left = fail_first
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # keep pytest output clean
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with lock:
                    outer.requests.append({"path": self.path, "auth": self.headers.get("Authorization"), **body})
                    fail = outer.fail_left > 0
                    outer.fail_left -= fail
                if fail:
                    self._send(503, {"error": {"message": "warming up", "type": "server_error"}})
                    return
                if self.path != "/v1/completions":
                    self._send(404, {"error": {"message": "not found"}})
                    return
                choices = []
                for i in range(body.get("n", 1)):
                    text = f"{body['prompt'][-3:]}|{body.get('seed')}|{i}"
                    choice = {"index": i, "text": text, "logprobs": None,
                              "finish_reason": "length" if body["max_tokens"] < 4 else "stop"}
                    if with_token_ids and body.get("return_token_ids"):
                        choice["token_ids"] = [ord(ch) for ch in text]
                    choices.append(choice)
                choices.reverse()  # servers need not answer in index order
                used = sum(len(c["text"]) for c in choices)
                self._send(200, {"id": "cmpl-test", "object": "text_completion", "created": 0,
                                 "model": body["model"], "choices": choices,
                                 "usage": {"prompt_tokens": 1, "completion_tokens": used, "total_tokens": used + 1}})

            def _send(self, code, payload):
                data = json.dumps(payload).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        lock = threading.Lock()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server():
    s = FakeCompletionsServer()
    yield s
    s.close()


def test_completions_in_prompt_order_with_per_prompt_seeds(server):
    gen = OpenAIGenerator(server.url, model="tiny", api_key="k", max_concurrency=3)
    prompts = [f"prompt-{i:03d}" for i in range(5)]
    out = gen.sample(prompts, 3, temperature=0.7, top_p=0.9, max_new_tokens=16, stop=["\ndef"], seed=10)
    assert [[c.text for c in o] for o in out] == [[f"{p[-3:]}|{10 + i}|{j}" for j in range(3)] for i, p in enumerate(prompts)]
    for c in (c for o in out for c in o):
        assert c.token_ids == [ord(ch) for ch in c.text] and c.n_tokens == len(c.text) and c.finish_reason == "stop"
    req = server.requests[0]
    assert req["path"] == "/v1/completions" and req["auth"] == "Bearer k"
    assert (req["model"], req["n"], req["max_tokens"], req["temperature"], req["top_p"], req["stop"]) == \
        ("tiny", 3, 16, 0.7, 0.9, ["\ndef"])
    assert gen.last_throughput > 0


def test_length_finish_and_no_seed(server):
    out = OpenAIGenerator(server.url, model="tiny").sample(["abc"], 2, max_new_tokens=2)
    assert [c.finish_reason for c in out[0]] == ["length", "length"]
    assert "seed" not in server.requests[0] or server.requests[0]["seed"] is None


def test_servers_without_token_ids_get_usage_estimates():
    s = FakeCompletionsServer(with_token_ids=False)
    try:
        out = OpenAIGenerator(s.url, model="tiny").sample(["abc"], 2, max_new_tokens=8)
        assert all(c.token_ids == [] and c.n_tokens == len(c.text) for c in out[0])
    finally:
        s.close()


def test_transient_errors_are_retried():
    s = FakeCompletionsServer(fail_first=1)
    try:
        out = OpenAIGenerator(s.url, model="tiny", max_retries=2).sample(["abc"], 1, max_new_tokens=8)
        assert out[0][0].text == "abc|None|0" and len(s.requests) == 2
    finally:
        s.close()


def test_make_generator_builds_the_openai_backend(server):
    cfg = ModelConfig(path="Qwen/Qwen3-4B-Base", generation_backend="openai", base_url=server.url)
    gen = make_generator(cfg, path="ckpt-7")
    assert isinstance(gen, OpenAIGenerator) and gen.model == "ckpt-7"
    gen.sample(["abc"], 1)
    assert server.requests[-1]["model"] == "ckpt-7"
