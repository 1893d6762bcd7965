"""Example notebooks: use the real model when a provider key is set, else a recorded session."""

from __future__ import annotations

import os
from pathlib import Path

PROVIDER_KEYS = (
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "GEMINI_API_KEY",
    "MISTRAL_API_KEY",
    "GROQ_API_KEY",
    "OPENROUTER_API_KEY",
    "AZURE_API_KEY",
    "OLLAMA_API_BASE",
)


def has_provider_key() -> bool:
    """A real provider key; the placeholder a replay server sets (on a rerun) does not count. The
    settings panel's key store is followed first (a key removed there is gone from this kernel)."""
    from goat_jupyter.config.keys import sync_keys
    from goat_jupyter.replay import REPLAY_API_KEY

    sync_keys()
    return any(os.environ.get(key) not in (None, "", REPLAY_API_KEY) for key in PROVIDER_KEYS)


def replay_unless_key(cassette: str | Path) -> str:
    """Start the replay server for `cassette` when no provider key is set; say which mode is on."""
    if has_provider_key():
        from goat_jupyter.settings import load_settings

        return f"Using the real model {load_settings(Path.cwd()).model} (a provider key is set)."
    from goat_jupyter.replay import REPLAY_MODEL, start_replay

    server = start_replay(cassette)
    os.environ["GOAT_MODEL"] = REPLAY_MODEL
    return f"No API key set: replaying the recorded session {Path(cassette).name} from {server.url}."
