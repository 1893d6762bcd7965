"""Command line: play a cassette, or record one by proxying to a real provider.

python -m goat_jupyter.replay CASSETTE [--port N]
python -m goat_jupyter.replay record OUT.json --upstream-model openai/gpt-4o-mini [--port N]
python -m goat_jupyter.replay record OUT.json --upstream http://host:8000/v1 [--upstream-model M]
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading

from goat_jupyter.replay.cassette import load_cassette
from goat_jupyter.replay.recorder import UpstreamRecorder, record_server
from goat_jupyter.replay.server import ReplayServer


def _play_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m goat_jupyter.replay",
        description="Serve a cassette as an OpenAI-compatible API. Use 'record OUT.json ...' to record one.",
    )
    parser.add_argument("cassette", help="cassette JSON file to play")
    _add_common(parser)
    return parser


def _record_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m goat_jupyter.replay record",
        description="Proxy requests to a real provider through litellm and save each answer as a turn.",
    )
    parser.add_argument("out", help="cassette file to write (rewritten after every turn)")
    parser.add_argument("--upstream-model", help="litellm model, e.g. openai/gpt-4o-mini")
    parser.add_argument("--upstream", help="OpenAI-compatible base URL of the upstream provider")
    parser.add_argument("--upstream-api-key", help="API key for --upstream (default: $OPENAI_API_KEY)")
    parser.add_argument(
        "--match-first-user",
        action="store_true",
        help="give each turn a match on the conversation's first user message (for concurrent subagents)",
    )
    _add_common(parser)
    return parser


def _add_common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--port", type=int, default=0, help="port to listen on (default: a free one)")
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default: 127.0.0.1)")
    parser.add_argument("--quiet", action="store_true", help="do not log each request to stderr")


def _log(text: str) -> None:
    print(f"[goat replay] {text}", file=sys.stderr, flush=True)


def build_server(argv: list[str]) -> ReplayServer:
    """Parse arguments into a (not yet started) server."""
    if argv[:1] == ["record"]:
        args = _record_parser().parse_args(argv[1:])
        if not args.upstream_model and not args.upstream:
            _record_parser().error("give --upstream-model, --upstream, or both")
        api_key = args.upstream_api_key or (
            os.environ.get("OPENAI_API_KEY") or "none" if args.upstream else None
        )
        server = record_server(
            args.out,
            args.upstream_model,
            upstream_url=args.upstream,
            api_key=api_key,
            match_first_user=args.match_first_user,
            port=args.port,
        )
    else:
        args = _play_parser().parse_args(argv[1:] if argv[:1] == ["play"] else argv)
        server = ReplayServer(load_cassette(args.cassette), port=args.port)
    server.host = args.host
    server.log = None if args.quiet else _log
    return server


def main(argv: list[str] | None = None) -> int:
    """Start the server, print its base URL, and serve until Ctrl-C or SIGTERM."""
    server = build_server(sys.argv[1:] if argv is None else argv)
    url = server.start()
    print(url, flush=True)
    if isinstance(server.source, UpstreamRecorder):
        _log(f"recording to {server.source.out_path} at {url}; set OPENAI_API_BASE={url}")
    else:
        _log(
            f"serving {len(server.remaining)} turn(s) at {url}; set OPENAI_API_BASE={url}, model openai/replay"
        )
    stopped = threading.Event()
    signal.signal(signal.SIGTERM, lambda _signum, _frame: stopped.set())
    try:
        stopped.wait()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
