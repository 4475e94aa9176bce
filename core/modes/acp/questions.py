"""Provides the questions a run asks, as ACP's ``session/request_permission``, and the answers read back.

A permission question offers ``allow_once``, ``allow_always`` (its name says the rule an "always" keeps, as
the workbench shows it: ``Always allow bash(make test)``) and ``reject_once``; a command the sandbox refused,
asked about running once outside it, is never offered "always". A plan is approved or cancelled: the
question shows the plan. Whatever is not a choice of an offered option (the client answered ``cancelled``, an
error, or an option it was not offered) is a refusal: the call is declined, the plan cancelled.
"""

from __future__ import annotations

from acp.helpers import text_block, tool_content
from acp.schema import AllowedOutcome, PermissionOption, RequestPermissionResponse, ToolCallUpdate

from chimera.core.events import PermissionRequested, PlanProposed
from chimera.core.modes.acp.tool_calls import kind_of, title_of
from chimera.core.permissions.kept import always_words

__all__ = ["decision", "permission_question", "plan_question"]

ALLOW, ALWAYS, DENY = "allow", "always", "deny"  # the option ids: the executor's answers
APPROVE, CANCEL = "approve", "cancel"  # a plan's


def permission_question(event: PermissionRequested, call_id: str) -> tuple[ToolCallUpdate, list[PermissionOption]]:
    """The call ``event`` asks about (``call_id``: its id in the session) and the options offered."""
    if event.outside_sandbox:
        title = f"Run {event.name} again outside the sandbox?"
        options = [PermissionOption(option_id=ALLOW, name="Run it outside the sandbox, once", kind="allow_once")]
    else:
        title = title_of(event.name, event.args)
        rule = always_words(event.name, event.args, one_file=bool(event.reason))
        options = [
            PermissionOption(option_id=ALLOW, name="Allow once", kind="allow_once"),
            PermissionOption(option_id=ALWAYS, name=f"Always allow {rule}", kind="allow_always"),
        ]
    options.append(PermissionOption(option_id=DENY, name="Deny", kind="reject_once"))
    said = [f"Asked because {event.reason}."] if event.reason and not event.outside_sandbox else []
    said += [event.reason[:1].upper() + event.reason[1:] + "."] if event.outside_sandbox and event.reason else []
    call = ToolCallUpdate(
        tool_call_id=call_id,
        title=title,
        kind=kind_of(event.name, event.args),
        status="pending",
        content=[tool_content(text_block(line)) for line in said] or None,
        raw_input=event.args,
    )
    return call, options


def plan_question(event: PlanProposed) -> tuple[ToolCallUpdate, list[PermissionOption]]:
    """The plan ``event`` proposes, as a question (its id is the request's) with the plan in it."""
    checklist = "\n".join(f"{n}. {step}" for n, step in enumerate(event.steps, 1))
    call = ToolCallUpdate(
        tool_call_id=event.request_id,
        title="Approve the plan?",
        kind="switch_mode",
        status="pending",
        content=[tool_content(text_block(checklist))],
        raw_input={"plan": event.steps},
    )
    options = [
        PermissionOption(option_id=APPROVE, name="Approve the plan and carry it out", kind="allow_once"),
        PermissionOption(option_id=CANCEL, name="Cancel the plan", kind="reject_once"),
    ]
    return call, options


def decision(response: RequestPermissionResponse | BaseException, options: list[PermissionOption]) -> str:
    """The answer ``response`` gives among ``options``: the id of the one chosen; the refusal (the option of
    kind ``reject_once``) for a cancelled outcome, an error, or an option not offered."""
    refusal = next(option.option_id for option in options if option.kind == "reject_once")
    if isinstance(response, BaseException) or not isinstance(response.outcome, AllowedOutcome):
        return refusal
    chosen = response.outcome.option_id
    return chosen if chosen in {option.option_id for option in options} else refusal
