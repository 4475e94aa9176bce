"""Provides ``prompt_of``: an ACP prompt's content blocks as the task Chimera sends to the model.

Text is the person's words. A ``resource_link`` (a file the person pointed at) becomes a mention of it, its
path for a ``file://`` URI; an embedded resource's text comes in a ``<context>`` block naming its URI; an
image (PNG, JPEG, GIF or WebP, as the Messages API takes them) goes as an image block. A prompt of text
alone is one string, as a typed task is. Audio, and a binary resource that is not such an image, are
refused in one line naming the fix.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from urllib.parse import unquote, urlparse

from acp.schema import (
    AudioContentBlock,
    BlobResourceContents,
    EmbeddedResourceContentBlock,
    ImageContentBlock,
    ResourceContentBlock,
    TextContentBlock,
    TextResourceContents,
)

from chimera.core.errors import ConfigError
from chimera.core.mcp.results import IMAGE_TYPES
from chimera.core.messages import Prompt

__all__ = ["Block", "prompt_of"]

Block = TextContentBlock | ImageContentBlock | AudioContentBlock | ResourceContentBlock | EmbeddedResourceContentBlock


def prompt_of(blocks: Sequence[Block]) -> Prompt:
    """The task ``blocks`` say; ConfigError for content Chimera cannot send."""
    out: list[dict[str, Any]] = []
    for block in blocks:
        match block:
            case TextContentBlock(text=text):
                out.append(_text(text))
            case ResourceContentBlock(name=name, uri=uri):
                out.append(_text(f"@{_path(uri) or f'{name} ({uri})'}"))
            case EmbeddedResourceContentBlock(resource=TextResourceContents(uri=uri, text=text)):
                out.append(_text(f'<context ref="{_path(uri) or uri}">\n{text}\n</context>'))
            case EmbeddedResourceContentBlock(resource=BlobResourceContents(uri=uri, blob=blob, mime_type=mime)):
                out.append(_image(blob, mime, f"the resource {uri}"))
            case ImageContentBlock(data=data, mime_type=mime):
                out.append(_image(data, mime, "an image"))
            case AudioContentBlock():
                raise ConfigError("Chimera takes no audio in a prompt: send text, files or images")
    if all(block["type"] == "text" for block in out):
        return "\n\n".join(block["text"] for block in out)
    return out


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def _image(data: str, mime: str | None, what: str) -> dict[str, Any]:
    if mime not in IMAGE_TYPES:
        kinds = ", ".join(sorted(kind.removeprefix("image/") for kind in IMAGE_TYPES))
        raise ConfigError(f"{what} is {mime or 'of no stated type'}, which the model does not take: send {kinds}")
    return {"type": "image", "source": {"type": "base64", "media_type": mime, "data": data}}


def _path(uri: str) -> str | None:
    """The file a ``file://`` URI names; None for any other URI."""
    parsed = urlparse(uri)
    return unquote(parsed.path) if parsed.scheme == "file" and parsed.path else None
