"""Provider failures that no retry can fix: a missing key, a rejected key, an unknown model, no server."""

from __future__ import annotations

import os
import re
import socket
from collections.abc import Iterator, Mapping
from types import ModuleType
from typing import Any, Literal

from goat_jupyter.errors import LLMError

PANEL = "the goat settings panel (Settings menu, or the goat icon in the left sidebar)"
Kind = Literal["missing_key", "rejected_key", "unknown_model", "unreachable", "other"]

_MISSING_KEY_PHRASES = ("missing credentials", "api_key client option must be set", "no api key")


class ProviderSetupError(LLMError):
    """A failure whose message is already one sentence for the user, naming what to fix."""


class MissingCredentialsError(ProviderSetupError):
    """The model's provider needs a key that is not set; raised before any request."""


class RejectedKeyError(ProviderSetupError):
    """The provider refused the key (HTTP 401/403)."""


class UnknownModelError(ProviderSetupError):
    """The provider does not serve the model."""


class EndpointUnreachableError(ProviderSetupError):
    """Nothing answers at the model endpoint (connection refused, unknown host)."""


def causes(exc: BaseException) -> Iterator[BaseException]:
    """`exc` and what it was raised from, outermost first (SDKs wrap the socket error several times)."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def missing_key_variables(litellm: ModuleType, model: str, extra: Mapping[str, Any]) -> list[str]:
    """The key variables litellm says `model` needs and the environment lacks (endpoints are not keys)."""
    if extra.get("api_key"):
        return []
    try:
        report: dict[str, Any] = litellm.validate_environment(model)
    except Exception:  # a model litellm cannot place: the request itself will say what is wrong
        return []
    if report.get("keys_in_environment"):
        return []
    names: list[Any] = list(report.get("missing_keys") or [])
    return [str(name) for name in names if str(name).endswith("_API_KEY")]


# Providers whose key litellm's validate_environment asks for by these names (any one will do): known
# here without importing litellm, which takes seconds on a kernel's first run.
_KEYS_WITHOUT_LITELLM = {
    "openai": ("OPENAI_API_KEY",),
    "anthropic": ("ANTHROPIC_API_KEY",),
    "gemini": ("GOOGLE_API_KEY", "GEMINI_API_KEY"),
    "mistral": ("MISTRAL_API_KEY",),
    "groq": ("GROQ_API_KEY",),
    "openrouter": ("OPENROUTER_API_KEY",),
    "deepseek": ("DEEPSEEK_API_KEY",),
}
_BARE_OPENAI = re.compile(r"(?:gpt-|o\d)")  # gpt-4o-mini, o3-mini: litellm sends them to OpenAI


def quick_missing_keys(
    model: str, extra: Mapping[str, Any], environ: Mapping[str, str] | None = None
) -> list[str] | None:
    """The key variables `model` needs and the environment lacks, for well-known providers, without
    litellm; None where only litellm can tell (other providers, bare names of other families)."""
    if extra.get("api_key"):
        return []
    variables = _KEYS_WITHOUT_LITELLM.get(_named_provider(model))
    if variables is None:
        return None
    env = os.environ if environ is None else environ
    return [] if any(env.get(name) for name in variables) else list(variables)


def _named_provider(model: str) -> str:
    """The provider the model's name says for sure ("" when litellm would have to guess)."""
    if "/" in model:
        return model.split("/", 1)[0]
    return "openai" if _BARE_OPENAI.match(model) else ""


def missing_key_text(model: str, variables: list[str]) -> str:
    named = " or ".join(variables)
    return f"No API key for {model}: set {named}, or store it in {PANEL}, then run %goat config reload."


def kind_of(exc: BaseException, litellm: ModuleType) -> Kind:
    """Which failure this is, looking through the SDK's wrapping (litellm calls most of them HTTP 500)."""
    chain = list(causes(exc))
    if any(isinstance(cause, (ConnectionRefusedError, socket.gaierror)) for cause in chain):
        return "unreachable"
    if any(_says_missing_key(cause) for cause in chain):
        return "missing_key"
    status = getattr(exc, "status_code", None)
    if isinstance(exc, (litellm.AuthenticationError, litellm.PermissionDeniedError)) or status in (401, 403):
        return "rejected_key"
    if isinstance(exc, litellm.NotFoundError) or status == 404:
        return "unknown_model"
    return "other"


def _says_missing_key(exc: BaseException) -> bool:
    if getattr(exc, "status_code", None) not in (None, 500):
        return False
    text = str(exc).lower()
    return any(phrase in text for phrase in _MISSING_KEY_PHRASES)


# The provider's key variable by litellm's model prefix, for when the key is set but refused.
KEY_VARIABLES = {
    "openai": "OPENAI_API_KEY",
    "anthropic": "ANTHROPIC_API_KEY",
    "gemini": "GEMINI_API_KEY",
    "azure": "AZURE_API_KEY",
    "mistral": "MISTRAL_API_KEY",
    "groq": "GROQ_API_KEY",
    "openrouter": "OPENROUTER_API_KEY",
    "deepseek": "DEEPSEEK_API_KEY",
}


def provider_of(model: str) -> str:
    return model.split("/", 1)[0] if "/" in model else "openai"


def key_variable(model: str) -> str:
    provider = provider_of(model)
    return KEY_VARIABLES.get(provider, f"{provider.upper()}_API_KEY")


def endpoint_of(exc: BaseException, model: str) -> str:
    """host:port of the refused connection when an SDK kept it, else the endpoint variable's value."""
    for cause in causes(exc):
        host, port = getattr(cause, "host", None), getattr(cause, "port", None)
        if isinstance(host, str) and host:
            return f"{host}:{port}" if port else host
    variable = endpoint_variable(model)
    return os.environ.get(variable) or "the provider's default endpoint"


def endpoint_variable(model: str) -> str:
    return f"{provider_of(model).upper()}_API_BASE"


def permanent_error(exc: BaseException, kind: Kind, model: str, litellm: ModuleType) -> LLMError | None:
    """The typed, one-sentence error for a failure that retrying cannot fix; None for the others."""
    if kind == "missing_key":
        return MissingCredentialsError(missing_key_text(model, [key_variable(model)]))
    if kind == "rejected_key":
        return RejectedKeyError(
            f"The provider rejected the API key for {model}: check {key_variable(model)} in {PANEL}."
        )
    if kind == "unknown_model":
        return UnknownModelError(
            f"The provider does not know the model {model}: pick another in {PANEL} or with %goat config model=...."
        )
    if kind == "unreachable":
        return EndpointUnreachableError(
            f"Nothing answers at {endpoint_of(exc, model)} (connection refused or unknown host): start the "
            f"model server, or check {endpoint_variable(model)} in {PANEL}."
        )
    return None
