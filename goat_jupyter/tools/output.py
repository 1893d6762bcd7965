"""What a tool call returns: text for the model, a summary and attachments for the user."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Attachment:
    """Binary content for the user and (for images) the model: base64 data plus its mime type."""

    mime_type: str
    data: str  # base64
    description: str = ""


@dataclass
class ToolOutput:
    content: str
    is_error: bool = False
    title: str = ""
    metadata: dict[str, Any] = field(default_factory=lambda: dict[str, Any]())
    attachments: list[Attachment] = field(default_factory=lambda: list[Attachment]())
    # For the user only; the model reads `content`. `summary` is a few words for the call's one line
    # ("49 lines"); `display` replaces `content` in the details when hints for the model would be noise.
    summary: str = ""
    display: str | None = None

    @property
    def error_code(self) -> str | None:
        return self.metadata.get("error_code")

    @property
    def declined(self) -> bool:
        """A refusal by design (errors.DeclinedError): information for the user, not a failure."""
        return self.metadata.get("declined") is True
