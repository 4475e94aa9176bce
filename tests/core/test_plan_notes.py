"""Every note the plan loop writes reads back as what it asks, from the words alone, whatever the plan's steps and
the checks' words hold; a note the loop did not write reads as none of them."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from chimera.core.loops.plan_notes import (
    PLANNING_PROMPT,
    PlanNote,
    check_note,
    edited_note,
    replan_note,
    retry_note,
    revise_note,
    step_note,
)
from chimera.core.loops.plans import Plan, parse_checklist
from chimera.core.messages import reminder_block
from chimera.core.sessions.reading import Note, read_node
from chimera.core.sessions.tree import Node

# A step as a checklist gives it: one line, with anything in it (backticks, brackets, "- [ ]", parentheses).
STEP = (
    st.text(st.characters(codec="utf-8", exclude_characters="\n\r"), min_size=1, max_size=40)
    .map(str.strip)
    .filter(bool)
)
STEPS = st.lists(STEP, min_size=1, max_size=6)
WORDS = st.text(st.characters(codec="utf-8"), min_size=1, max_size=200)  # a check's output, as it ends


def stored(text: str) -> PlanNote | None:
    """The note as a session reads it back: a reminder block of the loop's, in a user node of its own."""
    reading = read_node(Node("n1", None, "user", 1.0, {"role": "user", "content": [reminder_block(text)]}))
    assert isinstance(reading, Note)
    return reading.plan_note


@given(steps=STEPS, at=st.integers(0, 5))
def test_a_step_note_reads_back_with_its_step_and_the_plan_as_it_stood(steps: list[str], at: int) -> None:
    """Step N of M: the step, the whole plan, the steps before it ticked, and whether it is the first."""
    index = at % len(steps)
    note = stored(step_note(steps, index))
    assert note == PlanNote("step", index + 1, steps[index], tuple(steps), index, first=index == 0)


@given(steps=STEPS, number=st.integers(1, 99), why=WORDS)
def test_the_other_notes_read_back_as_written(steps: list[str], number: int, why: str) -> None:
    """Make a plan, revise it, follow an edit, check a step, a step not done, a plan that no longer holds."""
    assert stored(PLANNING_PROMPT) == PlanNote("planning")
    assert stored(revise_note(why)) == PlanNote("revise", why=why)
    assert stored(edited_note(Plan(tuple(steps), ""))) == PlanNote("edited", steps=tuple(steps))
    assert stored(check_note(number, steps[0])) == PlanNote("check", number, steps[0])
    assert stored(retry_note(number, why)) == PlanNote("retry", number, why=why)
    for index in (0, len(steps) - 1):
        assert stored(replan_note(why, index, len(steps))) == PlanNote("replan", index + 1, why=why)


def test_an_edit_that_is_no_list_is_one_step_and_reads_back_whole() -> None:
    """The person's edit without a list is one step, however many lines it spans."""
    edited = Plan(("Fix the parser\nthen run the tests",), "")
    assert parse_checklist("Fix the parser\nthen run the tests") is None
    assert stored(edited_note(edited)) == PlanNote("edited", steps=edited.steps)


@given(words=WORDS)
def test_a_note_the_plan_loop_did_not_write_is_none_of_its_notes(words: str) -> None:
    """A reflection, a reminder, anything else: no plan note."""
    assert stored(f"Reflect on what you did. {words}") is None
