"""The engine side of scripts/local-model: serve a GGUF with the prebuilt xllamacpp wheel, and check
that a running server's chat template is tool-aware.

    python scripts/local_model_server.py serve MODEL --alias A --port P --threads T --ctx C
    python scripts/local_model_server.py check --port P

`serve` needs xllamacpp (the `[local]` extra, or the cache venv scripts/local-model makes); `check`
needs only the standard library, so it also checks the llama-server fallback.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
import time
import urllib.error
import urllib.request
from typing import Any

# Words a tool-aware chat template renders: the offered tools and the model's calls to them.
TOOL_MARKERS = ("tools", "tool_calls", "tool_call")


def template_is_tool_aware(props: dict[str, Any]) -> bool:
    """Whether the served chat template renders tools and tool calls: without that, a tool list never
    reaches the model. The server's own verdict (`chat_template_caps`) where it gives one, else the text."""
    caps = props.get("chat_template_caps")
    if isinstance(caps, dict) and "supports_tool_calls" in caps:
        return bool(caps.get("supports_tools")) and bool(caps.get("supports_tool_calls"))  # pyright: ignore[reportUnknownMemberType, reportUnknownArgumentType]
    template = str(props.get("chat_template") or "")
    return any(marker in template for marker in TOOL_MARKERS)


def alive(pid: int | None) -> bool:
    if pid is None:
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def get_props(port: int, timeout_s: float, pid: int | None) -> dict[str, Any]:
    """The server's /props, waiting up to `timeout_s` for it to come up (while process `pid` lives)."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/props", timeout=10) as response:
                return json.loads(response.read())
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            if time.monotonic() > deadline or not alive(pid):
                raise
            time.sleep(0.5)


def check(port: int, timeout_s: float, pid: int | None) -> int:
    try:
        props = get_props(port, timeout_s, pid)
    except (urllib.error.URLError, ConnectionError, TimeoutError) as exc:
        print(f"local-model: no server answered on port {port}: {exc}", file=sys.stderr)
        return 1
    if template_is_tool_aware(props):
        print(
            "local-model: the served chat template is tool-aware (it renders tools and tool calls)",
            file=sys.stderr,
        )
        return 0
    print(
        "local-model: WARNING: the served chat template does not mention tools: tool calls will not work; "
        "use a GGUF with a tool-aware template or pass one with --chat-template-file",
        file=sys.stderr,
    )
    return 0


def serve(args: argparse.Namespace) -> int:
    import xllamacpp as xlc  # pyright: ignore[reportMissingImports]

    params: Any = xlc.CommonParams()
    params.model.path = args.model
    params.model_alias = {args.alias}
    params.n_ctx = args.ctx
    params.cpuparams.n_threads = args.threads
    params.cpuparams_batch.n_threads = args.threads
    params.hostnames = ["127.0.0.1"]
    params.port = args.port
    params.use_jinja = True
    params.n_parallel = 1
    server: Any = xlc.Server(params)  # starts the HTTP server on a background thread
    print(
        f"local-model: xllamacpp serving {args.alias} on {server.listening_address}",
        file=sys.stderr,
        flush=True,
    )
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    stop.wait()
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    serve_p = sub.add_parser("serve")
    serve_p.add_argument("model")
    serve_p.add_argument("--alias", required=True)
    serve_p.add_argument("--port", type=int, required=True)
    serve_p.add_argument("--threads", type=int, default=2)
    serve_p.add_argument("--ctx", type=int, default=32768)
    check_p = sub.add_parser("check")
    check_p.add_argument("--port", type=int, required=True)
    check_p.add_argument("--timeout", type=float, default=300)
    check_p.add_argument("--pid", type=int, default=None, help="stop waiting when this process ends")
    args = parser.parse_args()
    if args.command == "serve":
        return serve(args)
    return check(args.port, args.timeout, args.pid)


if __name__ == "__main__":
    sys.exit(main())
