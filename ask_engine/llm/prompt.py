"""The LLM's prompt: the question, recent turns and numbered evidence passages fenced as data, within a character
budget, rendered from prompts/llm_system.j2 and prompts/llm_answer.j2."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

import jinja2

from ask_engine.guard import sanitize_text
from ask_engine.types import Evidence, Task

if TYPE_CHECKING:
    pass
from ask_engine.phrases import PROMPTS_DIR

HISTORY_TURNS = 3  # earlier turns shown to the model; older ones rarely matter and cost context
HISTORY_CHARS = 400  # per question or answer of an earlier turn
MIN_PASSAGE_CHARS = 120  # a passage cut shorter than this says too little to be worth its number


# Our own fence tags and chat-template control tokens inside data would let a question or a merchant page close
# the fence (or the turn) and speak as the system.
_FENCE_TAG = re.compile(
    r"<\s*/?\s*(?:evidence|question|history|buyer|passage|answer|system|user|assistant|instructions?|im_start|im_end)"
    r"\b[^<>]*>",
    re.IGNORECASE,
)
_CONTROL_TOKEN = re.compile(r"<\|[^<>|]{0,40}\|>|\[/?INST\]|<<\s*/?\s*SYS\s*>>|</?s>", re.IGNORECASE)
_CONTROL_CHARS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def fence(text: str) -> str:
    """Text that is safe to place inside a data fence: fence tags and chat control tokens are neutralised."""
    text = _CONTROL_CHARS.sub(" ", text)
    text = _CONTROL_TOKEN.sub(" ", text)
    return _FENCE_TAG.sub(lambda m: m.group().replace("<", "‹").replace(">", "›"), text)


def _clip(text: str, limit: int) -> str:
    """`text` cut to `limit` characters, at a line or sentence end when one is near."""
    text = text.strip()
    if len(text) <= limit:
        return text
    cut = text[:limit]
    end = max(cut.rfind("\n"), cut.rfind(". "))
    if end >= limit // 2:
        cut = cut[: end + 1]
    return cut.rstrip() + " …"


@dataclass(frozen=True)
class PromptPassage:
    number: int
    title: str
    url: str
    text: str


@dataclass(frozen=True)
class Prompt:
    system: str
    user: str

    def messages(self) -> list[dict[str, str]]:
        return [{"role": "system", "content": self.system}, {"role": "user", "content": self.user}]


@lru_cache(maxsize=1)
def _templates() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(PROMPTS_DIR)),
        autoescape=False,  # the prompt is plain text; data is fenced by `fence`, not HTML-escaped
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=False,
    )


def _budget_passages(evidence: Sequence[Evidence], budget: int) -> list[PromptPassage]:
    """Every passage in rank order, cut so that together they fit `budget` characters. Short passages keep all
    their text and leave the rest of their share to the long ones; numbers stay those of the evidence."""
    texts = {ev.number: sanitize_text(ev.passage.text).strip() for ev in evidence}
    allowance: dict[int, int] = {}
    remaining = max(budget, 0)
    pending = sorted(evidence, key=lambda ev: len(texts[ev.number]))
    for i, ev in enumerate(pending):
        share = remaining // (len(pending) - i)
        allowance[ev.number] = min(len(texts[ev.number]), share)
        remaining -= allowance[ev.number]
    out: list[PromptPassage] = []
    for ev in evidence:
        text = texts[ev.number]
        limit = allowance[ev.number]
        if not text or (limit < len(text) and limit < MIN_PASSAGE_CHARS):
            continue
        out.append(
            PromptPassage(
                number=ev.number,
                title=fence(" ".join(ev.passage.title.split())),
                url=fence(ev.passage.url),
                text=fence(_clip(text, limit)),
            )
        )
    return out


def build_prompt(task: Task, *, max_sentences: int = 4, max_prompt_chars: int = 8000) -> Prompt:
    """The system and user messages for `task`: rules, buyer context, recent history, numbered evidence and the
    question, with the question, history and merchant text fenced as data."""
    question = fence(_clip(task.query, max(500, max_prompt_chars // 4)))
    history = [
        {"query": fence(_clip(t.query, HISTORY_CHARS)), "answer": fence(_clip(t.answer, HISTORY_CHARS))}
        for t in task.history[-HISTORY_TURNS:]
    ]
    buyer = [
        (label, fence(value))
        for label, value in (("Country", task.country), ("Region", task.region))
        if value and value.strip()
    ]
    used = len(question) + sum(len(h["query"]) + len(h["answer"]) for h in history)
    passages = _budget_passages(task.evidence, max_prompt_chars - used)
    env = _templates()
    system = env.get_template("llm_system.j2").render(
        shop_name=fence(task.shop_name), max_sentences=max_sentences, language=fence(task.language or "")
    )
    user = env.get_template("llm_answer.j2").render(
        buyer=buyer,
        history=history,
        passages=passages,
        question=question,
        operation_requested=task.operation_requested,
    )
    return Prompt(system=system.strip(), user=user.strip())
