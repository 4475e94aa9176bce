"""Provides ``Compactor``: the loop's side of compaction — when it is due, what it keeps, and doing it.

The shape of a compaction is ``loops.compaction``'s: where to cut, the
transcript sent to be summarized, the message that stands for the older part.
Here the summary is asked for (through the loop's ``ModelTurn``, so it counts
toward the run's usage), masked, kept in the session as a ``compaction`` node,
and the conversation becomes the summary and the kept tail. What a strategy
asked to keep (the plan) and its last note, while it holds, go into every
summary. A summary no shorter than what it would stand for changes nothing,
and the threshold does not ask again in that run.

The loop (``chimera.core.agent_loop.AgentLoop``) decides when: past
``auto_compact_threshold`` of the window, on a "prompt is too long" answer,
or by hand.
"""

from __future__ import annotations

from chimera.core.context import Context
from chimera.core.errors import ProviderError
from chimera.core.events import CompactionDone
from chimera.core.loops.base import Recorder
from chimera.core.loops.compaction import (
    SUMMARY_SYSTEM,
    Compaction,
    cut,
    request_budget,
    size,
    summary_message,
    summary_prompt,
)
from chimera.core.loops.model_turn import ModelTurn
from chimera.core.messages import content_blocks, joined_text
from chimera.core.providers.base import ModelRequest
from chimera.core.redact import Redactor
from chimera.core.strict_json import clean_json

__all__ = ["Compactor"]


class Compactor:
    """Compacts a conversation by ``policy``, the summary asked of ``model`` and masked by ``redactor``.

    ``remembered`` is what every summary keeps verbatim, by title (the plan, as it stands);
    ``instruction`` the strategy's last note in the run going; ``futile`` says a compaction
    this run could not shrink the conversation. :meth:`new_run` clears the last two.
    """

    def __init__(self, policy: Compaction, model: ModelTurn, redactor: Redactor) -> None:
        self.policy = policy
        self.model = model
        self.redactor = redactor
        self.remembered: dict[str, str] = {}
        self.instruction = ""
        self.futile = False

    def new_run(self) -> None:
        """A run starts: no note from the strategy yet, and the threshold may ask again."""
        self.instruction = ""
        self.futile = False

    def due(self, threshold: float | None) -> bool:
        """Whether the context has passed ``threshold`` (a share of the window; None: never) and this run's
        compactions have not proved futile."""
        model = self.model
        return threshold is not None and not self.futile and model.context_tokens >= threshold * model.window

    async def compact(
        self, context: Context, focus: str, *, reason: str, fixed: int, recorder: Recorder | None
    ) -> tuple[Context, CompactionDone] | None:
        """``context`` with its older part summarized, and the ``compaction`` event that says so (unpublished).

        The summary joins ``recorder`` (the session) as a ``compaction`` node after the leaf. ``focus``:
        what the summary should attend to; ``fixed``: the characters every request sends besides the
        messages (the system prompt, the tools' schemas), for the size estimate after. None when there
        is nothing older to summarize, or the summary came out no shorter than what it would stand for.
        """
        split = cut(context, self.policy)
        if split is None:
            return None
        output, limit = request_budget(self.model.window, self.policy)  # the request fits the model's window
        prompt = summary_prompt(split.older, focus, limit, self.policy.max_block)
        request = ModelRequest(system=SUMMARY_SYSTEM, messages=[{"role": "user", "content": prompt}], max_tokens=output)
        done = await self.model.ask(request, quiet=True)
        self.model.report(done)
        summary = joined_text(done.message).strip()
        if not summary:
            raise ProviderError(
                "the model gave an empty summary when asked to compact", kind="compaction", retryable=False
            )
        # The strategy's last note holds until the next one (plan first; do this step): kept if summarized.
        kept_text = [str(b.get("text", "")) for m in split.kept for b in content_blocks(m.get("content"))]
        instruction = "" if any(self.instruction in text for text in kept_text) else self.instruction
        message = summary_message(summary, split.older, self.remembered, instruction)
        message = self.redactor.mask_value(clean_json(message))
        before_size = sum(size(m) for m in context.messages)
        after_size = size(message) + sum(size(m) for m in split.kept)
        if after_size >= before_size:  # the summary says more than what it stands for: keep things as they were
            self.futile = True
            return None
        node_id = context.node_id
        if recorder is not None:
            node_id = recorder.record_compaction(message, parent=node_id, keep=split.kept_from)
        compacted = Context.along([(message, node_id), *zip(split.kept, split.kept_starts, strict=True)])
        compacted.node_id = node_id
        # The system prompt and the tools' schemas are sent with every request: only the messages shrink.
        before = self.model.context_tokens or (fixed + before_size) // 4
        after = round(before * (fixed + after_size) / (fixed + before_size))
        self.model.context_tokens = after
        event = CompactionDone(
            summary=summary, tokens_before=before, tokens_after=after, reason=reason, kept=len(split.kept)
        )
        return compacted, event
