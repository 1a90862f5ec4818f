"""Sentences: answer and evidence text split into sentences (lists, headings and tables kept apart), and what kind
of sentence each is (a claim, a refusal, or a fixed phrase about the answer)."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    pass
from ask_engine.guard.figures import _normalise_text
from ask_engine.language import word_list

SentenceKind = Literal["claim", "refusal", "meta"]


def _word_set(text: str) -> frozenset[str]:
    return frozenset(text.split())


_ABBREVIATIONS = _word_set(
    "e.g i.e etc approx incl excl vs mr mrs ms dr st ltd co inc fig max min dept est jr sr ave rd nb cf viz "
    "no nos tel mt ft sq pp"
)
# "No." is an abbreviation only before a number ("No. 5"); elsewhere it is the answer "No."
_ABBREV_NEEDS_DIGIT = frozenset({"no", "nos", "tel", "pp"})
# "U.S.", "P.O.", "a.m.": letters each followed by a dot
_DOTTED = re.compile(r"(?:^|[\s(])(?:[A-Za-z]\.){2,}$")
_SENTENCE_OPENERS = word_list("function_words") | word_list("sentence_openers")
_BOUNDARY = re.compile(r"(?<=[.!?])[\"'”’)\]]*\s+(?=[\"'“‘(\[]?[A-Z0-9£$€*_])")
_LIST_MARKER = re.compile(r"^\s*(?:[-*+•]|\d{1,3}[.)])\s+")
_HEADING = re.compile(r"^\s*#{1,6}\s+")
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(?:\|\s*:?-{2,}:?\s*)*\|?\s*$")
_TERMINAL = re.compile(r"[.!?:;]['\"”’)\]*_]*$")


def _lines(text: str) -> list[tuple[str, bool]]:
    """Logical lines and whether each is a list item: list items, headings and table rows stay separate; wrapped
    prose lines (the next one starting in lower case) are joined."""
    out: list[tuple[str, bool]] = []
    blank = True
    for raw in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        line = raw.strip()
        if not line or _TABLE_RULE.match(line):
            blank = True
            continue
        is_item = bool(_LIST_MARKER.match(line))
        structural = is_item or bool(_HEADING.match(line)) or line.startswith("|")
        if line.startswith("|"):
            cells = [c.strip() for c in line.strip("|").split("|")]
            line = "; ".join(c for c in cells if c)
        line = _HEADING.sub("", _LIST_MARKER.sub("", line))
        if out and not blank and not structural and not _TERMINAL.search(out[-1][0]) and line[:1].islower():
            out[-1] = (f"{out[-1][0]} {line}", out[-1][1])
        else:
            out.append((line, is_item))
        blank = False
    return out


def _line_units(text: str) -> list[str]:
    return [line for line, _ in _lines(text)]


def _split_line(line: str) -> list[str]:
    parts: list[str] = []
    start = 0
    for match in _BOUNDARY.finditer(line):
        candidate = line[start : match.start()].strip()
        last = re.findall(r"([A-Za-z][A-Za-z.]*)\.?[\"'”’)\]]*$", candidate)
        word = last[0].rstrip(".").lower() if last else ""
        nxt = line[match.end() : match.end() + 1]
        if word in _ABBREVIATIONS and (word not in _ABBREV_NEEDS_DIGIT or nxt.isdigit()):
            continue
        if re.search(r"(?:^|\s)[A-Z]\.$", candidate):  # an initial: "J. Smith"
            continue
        if candidate[-1:] in "!?" and line[match.start() : match.start() + 1] == ")" and "(" in candidate:
            continue  # a bracket's own "!" closes the bracket, not the sentence: "(… no daylight saving!) Mon-Fri go out"
        if _DOTTED.search(candidate):
            # "the U.S. Virgin Islands", "P.O. Boxes", "9 a.m. Monday": a dotted abbreviation ends a sentence only
            # where a word that opens sentences follows ("… within the U.S. We also …")
            following = re.match(r"[\"'“‘(\[]?([A-Za-z]+)", line[match.end() :])
            if following is None or following.group(1).lower() not in _SENTENCE_OPENERS:
                continue
        if candidate:
            parts.append(candidate)
        start = match.end()
    tail = line[start:].strip()
    if tail:
        parts.append(tail)
    return parts


def split_sentences(text: str) -> list[str]:
    """Sentences of `text`: list items, headings, table rows and `Label: value` lines are sentences of their own.

    Abbreviations ("e.g.", "approx."), decimals and prices ("£3.95"), initials, URLs and e-mail addresses do not end
    a sentence. List markers, heading marks and table pipes are removed; inline text is kept as written.
    """
    return list(_sentences(text))


@lru_cache(maxsize=1 << 14)  # kept by text: evidence passages are split again in request after request
def _sentences(text: str) -> tuple[str, ...]:
    sentences: list[str] = []
    for line in _line_units(text):
        sentences.extend(s for s in _split_line(line) if re.search(r"[A-Za-z0-9]", s))
    return tuple(sentences)


_REFUSAL_PATTERNS = [
    r"\b(?:has|have|had)\s*(?:not|n't)\s+(?:been\s+)?recorded\b",
    r"\bnot (?:been )?recorded\b",
    r"\b(?:does|do)(?: not|n't) say exactly that\b",
    r"\bno (?:recorded )?(?:information|details?|record|data)\b(?! (?:is|are) (?:collected|stored|shared|sold))",
    r"\b(?:do|does|did)\s*(?:not|n't)\s+(?:have|hold|list|mention|say|state|specify|include)\b[^.]*"
    r"\b(?:information|details?|record|data|whether|if|how|what|which)\b",
    r"\b(?:could|can|couldn't|can't)\s*(?:not)?\s*find\b",
    r"\bcannot find\b",
    r"\bunable to (?:find|answer|say|confirm|tell)\b",
    r"\b(?:not|n't) able to (?:find|answer|say|confirm|tell)\b",
    r"\b(?:is|are|'s)\s*(?:not|n't) available right now\b",
    r"\b(?:isn't|aren't) available right now\b",
    r"\b(?:can(?:not|'t)|can not) (?:answer|help with that|say|confirm)\b",
    r"\bdon't know\b|\bdo not know\b",
    r"\bnot (?:listed|mentioned|specified|stated) (?:in|on|by|anywhere)\b",
    r"\b(?:isn't|aren't|is not|are not) (?:listed|mentioned|specified|stated) (?:in|on|by|anywhere)\b",
    r"\bno (?:answer|match(?:ing)?|results?)\b",
]
_META_PATTERNS = [
    r"\bnothing (?:was|has been|is|has|will be) (?:changed|done|updated|added|removed|cancel+ed|placed)\b",
    r"\bno changes? (?:was|were|has been|have been|will be) made\b",
    r"\b(?:i|we) (?:can(?:not|'t)|can not|am not able to|'m not able to|am unable to|'m unable to|do not|don't)\s+"
    r"(?:make|change|add|remove|place|cancel|update|apply|process|modify|book|edit|create|complete|issue|start)\b",
    r"\bread-only\b",
    r"\b(?:ask|send) (?:me |us )?(?:a |your )?question\b",
    r"\bwhat would you like to know\b",
    r"\b(?:i|we) can (?:only )?(?:help|answer)\b",
    r"\bhow can (?:i|we) help\b",
]
_REFUSAL_RE = re.compile("|".join(_REFUSAL_PATTERNS), re.IGNORECASE)
_META_RE = re.compile("|".join(_META_PATTERNS), re.IGNORECASE)


def classify(sentence: str) -> SentenceKind:
    """'refusal' (says the shop has no answer), 'meta' (a fixed phrase about the answer itself) or 'claim'."""
    text = _normalise_text(sentence)
    if _REFUSAL_RE.search(text):
        return "refusal"
    if _META_RE.search(text):
        return "meta"
    return "claim"
