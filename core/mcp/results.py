"""Provides ``result_text``: what an MCP tool call returned, as the text the model reads of it.

A result's content is a list of blocks. Text is kept as it is; an image is named by
its type and size, and its bytes kept aside, in ``images``, passed to the model as an
image block (a PNG, JPEG, GIF or WebP within the API's 5 MB, eight a result at most);
a resource link names its URI; an embedded resource gives its text, or names a
binary one. A result whose content is empty but that carries structured
content gives that as JSON, as the specification asks servers to do themselves.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass, field
from typing import Any

__all__ = ["IMAGE_TYPES", "McpOutput", "result_text"]

IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})  # what the Messages API takes
LARGEST_IMAGE = 5 * 1024 * 1024  # bytes: the Messages API's limit for one image
MOST_IMAGES = 8  # images of one result passed on; the rest are named only


@dataclass(frozen=True, slots=True)
class McpOutput:
    """A call's result read: its text, whether the server said it failed, its images and its structured content."""

    text: str
    is_error: bool
    images: list[dict[str, str]] = field(default_factory=list)  # {"media_type": ..., "data": base64}
    structured: Any = None


def result_text(result: Any) -> McpOutput:
    """The text of ``result`` (an ``mcp_types.CallToolResult``), one block after another."""
    parts: list[str] = []
    images: list[dict[str, str]] = []
    for block in result.content or []:
        kind = getattr(block, "type", None)
        if kind == "text":
            parts.append(block.text)
        elif kind in ("image", "audio"):
            size = _decoded_size(block.data)
            passed = kind == "image" and block.mime_type in IMAGE_TYPES and size <= LARGEST_IMAGE
            passed = passed and len(images) < MOST_IMAGES
            note = "" if passed or kind != "image" else ", not shown to the model (over its size, kind or count)"
            parts.append(f"[{kind}: {block.mime_type}, {size} bytes{note}]")
            if passed:
                images.append({"media_type": block.mime_type, "data": block.data})
        elif kind == "resource_link":
            title = block.title or block.name
            parts.append(f"[resource link: {title} {block.uri}]")
        elif kind == "resource":
            resource = block.resource
            text = getattr(resource, "text", None)
            if text is not None:
                parts.append(text)
            else:
                size = _decoded_size(getattr(resource, "blob", ""))
                parts.append(f"[resource: {resource.uri}, {resource.mime_type or 'binary'}, {size} bytes]")
        else:
            parts.append(f"[content of a kind Chimera does not read: {kind}]")
    structured = getattr(result, "structured_content", None)
    if not parts and structured is not None:
        parts.append(json.dumps(structured, ensure_ascii=False, indent=2))
    return McpOutput("\n".join(parts), bool(result.is_error), images, structured)


def _decoded_size(data: str) -> int:
    try:
        return len(base64.b64decode(data, validate=True))
    except (binascii.Error, ValueError):
        return len(data)
