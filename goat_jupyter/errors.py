"""Typed errors raised inside goat; the executor turns them into `Error: ...` results."""

from __future__ import annotations

from typing import Literal

ErrorCode = Literal[
    "INVALID_INPUT",
    "INVALID_PATH",
    "FILE_NOT_FOUND",
    "PERMISSION_DENIED",
    "TIMEOUT",
    "EXECUTION_ERROR",
    "UNKNOWN_TOOL",
    "CANCELLED",
    "CONFLICT",
]


class GoatError(Exception):
    """Root of every error goat raises on purpose; `code` is what the model and UI see."""

    code: ErrorCode = "EXECUTION_ERROR"

    def __init__(self, message: str, *, output: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.output = output  # partial output to show after the message, if any


class InvalidInputError(GoatError):
    code = "INVALID_INPUT"


class InvalidPathError(GoatError):
    code = "INVALID_PATH"


class FileNotFoundGoatError(GoatError):
    code = "FILE_NOT_FOUND"


class PermissionDeniedError(GoatError):
    code = "PERMISSION_DENIED"


class DeclinedError(PermissionDeniedError):
    """A refusal by design, not a failure (tutor style keeps out of the student's cells): the cell
    shows it as information; the model reads it like any refusal."""


class UserDeniedError(PermissionDeniedError):
    """The user clicked Deny: the message is for the model; the cell already holds the user's record."""


class ToolTimeoutError(GoatError):
    code = "TIMEOUT"


class ToolExecutionError(GoatError):
    code = "EXECUTION_ERROR"


class UnknownToolError(GoatError):
    code = "UNKNOWN_TOOL"


class CancelledToolError(GoatError):
    code = "CANCELLED"


class ConflictError(GoatError):
    code = "CONFLICT"


class NotAvailableError(GoatError):
    """A tool whose runtime is missing here (no frontend, no subagent runner, ...)."""

    code = "EXECUTION_ERROR"


class LLMError(GoatError):
    """The model provider failed after all retries."""

    code = "EXECUTION_ERROR"


class ContextLengthError(LLMError):
    """The provider refused a request that does not fit the model's context window."""
