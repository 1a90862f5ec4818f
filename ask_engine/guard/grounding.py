"""The grounding guard: an answer generator's sentences are kept only where the evidence supports them."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from typing import Protocol

from ask_engine.guard.claims import check_claims, further_claims, is_not_recorded, not_recorded_part
from ask_engine.guard.figures import hard_tokens
from ask_engine.guard.untrusted import is_injection
from ask_engine.guard.words import (
    asked_about,
    attributable,
    names_no_product,
    names_products,
    names_recognisably,
    passage_subject,
)
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


def _about(task: Task, subjects: Sequence[str]) -> tuple[set[int], bool]:
    """The evidence numbers of the passages the question is about, and whether it leaves the product open.

    The products the question names come first (`asked_about`), then those the request's ids or the conversation
    resolved to (`Task.resolution`); the non-product passages are always about it. The product is *open* when the
    evidence holds two or more products and neither the question's words nor the resolution point at any of them
    ("Compare these two for weight" with ids that resolved to nothing).
    """
    numbers = [ev.number for ev in task.evidence]
    titles = {s for s in subjects if s}
    about = {numbers[i] for i in asked_about(task.query, subjects)}
    if len(titles) < 2 or not names_no_product(task.query, subjects):
        return about, False
    resolved = set(task.resolution.doc_ids) | set(task.resolution.mentioned_doc_ids)
    picked = {ev.number for ev, s in zip(task.evidence, subjects, strict=True) if s and ev.passage.doc_id in resolved}
    if not picked:
        return about, True
    return {ev.number for ev, s in zip(task.evidence, subjects, strict=True) if not s or ev.number in picked}, False


def ground(draft: Draft, task: Task, scorer: SupportScorer) -> tuple[Draft, tuple[Sentence, ...]]:
    """Keep only the sentences the evidence supports; returns the kept draft and the removed sentences.

    A claim must be supported by the evidence it cites, or failing that by any of the task's evidence; a meta
    sentence (a fixed phrase about the answer) is checked only for the numbers and codes it states.
    """
    by_number = {ev.number: ev.passage.text for ev in task.evidence}
    numbers = list(by_number)
    everything = list(by_number.values())
    subjects = [passage_subject(ev.passage) for ev in task.evidence]
    about, open_product = _about(task, subjects)
    non_product = {numbers[i] for i, subject in enumerate(subjects) if not subject}
    about_titles = {subjects[i] for i, n in enumerate(numbers) if n in about and subjects[i]}
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
            # another product counts as named only when a reader would recognise it ("the filter" in an answer
            # about a steel bottle is the bottle's, whatever product title also holds the word)
            named = {
                t
                for t in names_products(sentence.text, subjects)
                if t in about_titles or names_recognisably(sentence.text, t)
            }
            if not named:
                # a sentence without its own product is about the one the question names; when the question
                # leaves two or more products open, a product's fact line says nothing the buyer can place
                allowed &= non_product if open_product else about
            elif named <= about_titles:
                allowed &= about  # about the product asked about: not another product's facts
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
            if ok and claims.verdict == "not_recorded":
                # "not recorded, so you can't …": what it goes on to say is a claim, checked on its own; when it
                # fails, the not-recorded part alone stays (and the engine can still refute it)
                sources = [by_number[n] for n in numbers if n in allowed]
                if not all(
                    scorer.support(part, sources).supported and check_claims(part, sources).verdict == "ok"
                    for part in further_claims(sentence.text)
                ):
                    removed.append(sentence)
                    part = not_recorded_part(sentence.text)
                    if part and check_claims(part, sources).verdict == "not_recorded":
                        kept.append(Sentence(text=part, kind="meta"))
                    continue
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
