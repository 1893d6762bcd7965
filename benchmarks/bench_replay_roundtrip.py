"""Streamed chat-completion round trips: ReplayServer vs a bare stdlib server sending the same bytes.

Both answer over HTTP/1.1 chunked SSE on 127.0.0.1 to one keep-alive httpx client. The baseline
has the finished response body precomputed and sends it in one write, so the ratio is what turn
picking, chunk building and per-chunk writes cost. Target: ratio <= 3.
Run: python benchmarks/bench_replay_roundtrip.py [--requests N] [--repeat N] [--quick]
"""

from __future__ import annotations

import argparse
import statistics
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx

from goat_jupyter.replay import ReplayServer

TURN: dict[str, Any] = {
    "text": "I will read the data file first and then summarise the three worst months for you. " * 3,
    "tool_calls": [
        {"name": "Read", "arguments": {"file_path": "/home/user/project/data/sales_2024.csv", "limit": 200}}
    ],
    "usage": {"prompt_tokens": 1200, "completion_tokens": 80},
}
REQUEST = {"model": "replay", "messages": [{"role": "user", "content": "go"}], "stream": True}


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--requests", type=int, default=200, help="requests per round")
    parser.add_argument("--repeat", type=int, default=5, help="interleaved rounds")
    parser.add_argument("--quick", action="store_true", help="50 requests, 3 rounds")
    return parser.parse_args()


def capture_body() -> bytes:
    """The exact SSE body ReplayServer sends for TURN, to serve from the baseline."""
    with ReplayServer([TURN]) as server, httpx.Client() as client:
        return client.post(f"{server.url}/chat/completions", json=REQUEST).content


def start_baseline(body: bytes) -> tuple[ThreadingHTTPServer, str]:
    """A minimal HTTP/1.1 server that answers every POST with `body` as one chunk."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            self.wfile.write(b"%x\r\n%s\r\n0\r\n\r\n" % (len(body), body))

        def log_message(self, format: str, *args: Any) -> None:
            return None

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd, f"http://127.0.0.1:{httpd.server_address[1]}/v1"


def run_requests(client: httpx.Client, url: str, count: int) -> None:
    for _ in range(count):
        with client.stream("POST", f"{url}/chat/completions", json=REQUEST) as response:
            for _line in response.iter_lines():
                pass


def main() -> None:
    args = parse_args()
    count, repeat = (50, 3) if args.quick else (args.requests, args.repeat)
    baseline_httpd, baseline_url = start_baseline(capture_body())
    replay = ReplayServer([TURN] * (count * (repeat + 1)))
    replay_url = replay.start()
    contenders: dict[str, Callable[[httpx.Client], None]] = {
        "replay": lambda client: run_requests(client, replay_url, count),
        "baseline": lambda client: run_requests(client, baseline_url, count),
    }
    times: dict[str, list[float]] = {name: [] for name in contenders}
    with httpx.Client() as client:
        for run in contenders.values():  # warm-up round
            run(client)
        for _ in range(repeat):
            for name, run in contenders.items():
                started = time.perf_counter()
                run(client)
                times[name].append(time.perf_counter() - started)
    replay.stop()
    baseline_httpd.shutdown()
    ours, base = (statistics.median(times[name]) / count * 1000 for name in ("replay", "baseline"))
    print(f"streamed round trip, {count} requests x {repeat} rounds (median per request)")
    print(f"  ReplayServer:          {ours:.3f} ms")
    print(f"  bare server, same bytes: {base:.3f} ms")
    print(f"  ratio: {ours / base:.2f}x (target <= 3)")


if __name__ == "__main__":
    main()
