"""Turn what the MCP servers return (tool calls, resources) into ToolOutput: text joined, images as
attachments."""

from __future__ import annotations

import base64
import binascii
import json
from typing import TYPE_CHECKING, Any

from goat_jupyter.errors import ToolExecutionError
from goat_jupyter.tools.output import Attachment, ToolOutput

if TYPE_CHECKING:
    from mcp_types import (
        BlobResourceContents,
        CallToolResult,
        ContentBlock,
        ReadResourceResult,
        Resource,
        TextResourceContents,
    )

    from goat_jupyter.mcp_client.manager import ResourceListing


def _decoded_size(data: str) -> int:
    try:
        return len(base64.b64decode(data, validate=False))
    except (binascii.Error, ValueError):
        return len(data) * 3 // 4


def _contents_part(item: TextResourceContents | BlobResourceContents, attachments: list[Attachment]) -> str:
    """Text of a resource's contents; images become attachments, other binaries a short note."""
    text = getattr(item, "text", None)
    if isinstance(text, str):
        return text
    blob: str = getattr(item, "blob", "")
    mime = item.mime_type or "application/octet-stream"
    if mime.startswith("image/"):
        attachments.append(Attachment(mime, blob, item.uri))
        return f"[{mime} image {item.uri} attached]"
    return f"[{item.uri}: {mime}, {_decoded_size(blob)} bytes of binary data, not shown]"


def _block_text(block: ContentBlock, attachments: list[Attachment]) -> str:
    """One content block as text for the model, collecting images as attachments."""
    if block.type == "text":
        return block.text
    if block.type == "image":
        attachments.append(Attachment(block.mime_type, block.data, "image returned by an MCP tool"))
        return f"[{block.mime_type} image attached]"
    if block.type == "audio":
        return f"[{block.mime_type} audio, {_decoded_size(block.data)} bytes, not shown]"
    if block.type == "resource":
        return _contents_part(block.resource, attachments)
    description = f": {block.description}" if block.description else ""
    return f"[resource link {block.name} <{block.uri}>{description}]"


def call_result_output(result: CallToolResult, title: str) -> ToolOutput:
    """Text blocks joined, images attached; `isError` raises so the executor reports an error result."""
    attachments: list[Attachment] = []
    parts = [_block_text(block, attachments) for block in result.content]
    if not any(part.strip() for part in parts) and result.structured_content is not None:
        parts.append(json.dumps(result.structured_content, indent=2, ensure_ascii=False))
    text = "\n".join(part for part in parts if part)
    if result.is_error:
        raise ToolExecutionError(text or f"{title} reported an error without details.")
    return ToolOutput(text, title=title, attachments=attachments)


def resource_output(result: ReadResourceResult, server: str, uri: str) -> ToolOutput:
    attachments: list[Attachment] = []
    parts = [_contents_part(item, attachments) for item in result.contents]
    text = "\n".join(parts) if parts else f"The resource {uri} on {server} is empty."
    return ToolOutput(text, title=f"{server}: {uri}", attachments=attachments)


def resource_entry(server: str, resource: Resource) -> dict[str, Any]:
    """One ListMcpResources entry, shaped like Claude Code's (uri, name, mimeType, description, server)."""
    entry: dict[str, Any] = {"uri": resource.uri, "name": resource.name}
    if resource.mime_type:
        entry["mimeType"] = resource.mime_type
    if resource.description:
        entry["description"] = resource.description
    entry["server"] = server
    return entry


def resource_list_output(listing: ResourceListing) -> ToolOutput:
    """Resources as a JSON array, then one line per server that could not be asked."""
    entries = [resource_entry(server, resource) for server, resource in listing.resources]
    if entries:
        text = json.dumps(entries, indent=2, ensure_ascii=False)
    else:
        text = "No resources found on the connected MCP servers."
    if listing.problems:
        text += "\n\n" + "\n".join(listing.problems)
    return ToolOutput(text, title="MCP resources")
