"""The grounding guard: an answer generator's sentences are kept only where the evidence supports them."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from typing import Protocol

from ask_engine.guard.claims import check_claims, is_not_recorded
from ask_engine.guard.figures import hard_tokens
from ask_engine.guard.untrusted import is_injection
from ask_engine.guard.words import asked_about, attributable, names_no_product, passage_subject
from ask_engine.phrases import phrase
from ask_engine.types import Draft, Sentence, Task


class SupportResult(Protocol):
    @property
    def supported(self) -> bool: ...


class SupportScorer(Protocol):
    """What the grounding guard needs from a faithfulness scorer (ask_engine.guard.faithfulness.FaithfulnessScorer)."""

    def support(self, sentence: str, evidence: Sequence[str]) -> SupportResult: ...


_CURRENCY_MARK = re.compile(r"^[£$€¥]")


def _figures_supported(sentence: str, sources: Sequence[str]) -> bool:
    """Every number, price, size and code the sentence states also appears in one of the sources."""
    needed = hard_tokens(sentence)
    if not needed:
        return True
    available: set[str] = set()
    for source in sources:
        available |= hard_tokens(source)
    bare = {_CURRENCY_MARK.sub("", token) for token in available}
    return all(token in available or _CURRENCY_MARK.sub("", token) in bare for token in needed)


def ground(draft: Draft, task: Task, scorer: SupportScorer) -> tuple[Draft, tuple[Sentence, ...]]:
    """Keep only the sentences the evidence supports; returns the kept draft and the removed sentences.

    A claim must be supported by the evidence it cites, or failing that by any of the task's evidence; a meta
    sentence (a fixed phrase about the answer) is checked only for the numbers and codes it states.
    """
    by_number = {ev.number: ev.passage.text for ev in task.evidence}
    numbers = list(by_number)
    everything = list(by_number.values())
    subjects = [passage_subject(ev.passage) for ev in task.evidence]
    about = {numbers[i] for i in asked_about(task.query, subjects)}
    kept: list[Sentence] = []
    removed: list[Sentence] = []
    for sentence in draft.sentences:
        if is_injection(sentence.text):
            removed.append(sentence)
            continue
        if sentence.kind == "meta":
            ok = _figures_supported(sentence.text, [*everything, task.query])
            ok = ok and check_claims(sentence.text, everything).verdict != "fragment"
        else:
            # a sentence naming one product may not borrow another product's facts
            allowed = {numbers[i] for i in attributable(sentence.text, subjects)}
            if names_no_product(sentence.text, subjects):
                allowed &= about  # a sentence without its own product is about the one the question names
            claims = check_claims(sentence.text, [by_number[n] for n in numbers if n in allowed])
            if claims.verdict == "negative_unsupported":
                # "the shop does not have X" where the evidence only never mentions X: say that plainly
                removed.append(sentence)
                kept.append(
                    Sentence(text=phrase("not_mentioned", thing=claims.detail, shop=task.shop_name), kind="meta")
                )
                continue
            cited = [by_number[n] for n in sentence.cites if n in allowed]
            ok = bool(cited) and scorer.support(sentence.text, cited).supported
            if not ok and allowed:
                ok = scorer.support(sentence.text, [by_number[n] for n in numbers if n in allowed]).supported
            # word overlap passed; each claim inside the sentence (list items, names) must hold too
            ok = ok and claims.verdict in ("ok", "not_recorded")
        (kept if ok else removed).append(sentence)
    if not removed:
        return draft, ()
    return replace(draft, sentences=tuple(kept)), tuple(removed)


def claims_not_recorded(draft: Draft) -> bool:
    """True when a draft says the shop has not recorded something (a claim the extractive answer can refute)."""
    return any(is_not_recorded(s.text) for s in draft.sentences)


def answers_something(draft: Draft) -> bool:
    """True when a draft still carries an answer: at least one claim, or a fixed phrase that is itself the answer."""
    if not draft.sentences:
        return False
    if draft.kind == "answer":
        return any(s.kind == "claim" for s in draft.sentences)
    return True
