"""litellm's model catalogue for the model picker, with which providers have their keys set.

Only names are returned: whether a provider's key is present, and which variables are missing;
never a value."""

from __future__ import annotations

import functools
import os
from typing import Any, cast

_CHAT_MODES = ("chat", "responses")


@functools.cache
def chat_models() -> dict[str, list[str]]:
    """Provider -> its chat model names, from litellm's bundled cost map (imported once, ~seconds)."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # the server must not fetch it
    import litellm

    by_provider: dict[str, list[str]] = {}
    cost_map = cast("dict[str, dict[str, Any]]", litellm.model_cost)  # pyright: ignore[reportUnknownMemberType]
    for name, info in cost_map.items():
        if info.get("mode") in _CHAT_MODES and isinstance(info.get("litellm_provider"), str):
            by_provider.setdefault(info["litellm_provider"], []).append(name)
    return {provider: sorted(names) for provider, names in sorted(by_provider.items())}


def provider_keys(provider: str, example_model: str) -> dict[str, Any]:
    """Whether litellm finds this provider's credentials in the environment, and what is missing."""
    import litellm

    try:
        found = cast("dict[str, Any]", litellm.validate_environment(model=example_model))  # pyright: ignore[reportUnknownMemberType]
    except Exception:  # an exotic provider litellm cannot check: say nothing rather than guess
        return {"provider": provider, "key_present": None, "missing": []}
    missing = [str(name) for name in cast("list[object]", found.get("missing_keys") or [])]
    return {"provider": provider, "key_present": bool(found.get("keys_in_environment")), "missing": missing}


def catalogue() -> dict[str, Any]:
    """The picker's data: models with their provider, and each provider's key status."""
    models = chat_models()
    return {
        "models": [
            {"id": name, "provider": provider} for provider, names in models.items() for name in names
        ],
        "providers": [provider_keys(provider, names[0]) for provider, names in models.items()],
    }
