"""Claims inside one model sentence, checked one by one against the evidence.

Word overlap judges a sentence as a whole, so "comes in black, blue, purple, red and white" passes when four of the
five colours are recorded, and "the shop does not have a customer service number" passes when the evidence merely
never mentions one. Here a sentence is split into the claims that overlap cannot see:

- **list items**: every item of an enumeration must itself be in the evidence;
- **negative existence** ("does not have / offer / sell X", "there is no X"): allowed only where the evidence says
  so (a negated sentence naming X); otherwise the shop's plain "not mentioned" phrasing replaces it;
- **not recorded**: a model's "the shop has not recorded …" is a claim about the evidence too; the engine lets it
  stand only when the extractive answerer also finds nothing;
- **fragments**: a sentence with no claim in it ("The shop has not recorded.") is dropped;
- **stock states** ("is sold out", "is in stock"): must be a state the product's own stock lines give
  (`ask_engine.guard.bindings.unsupported_stock`).

A list's items must also come from one passage (or passages of one title): a product's colours, sizes or contents
are listed in its own passage, so a list whose items need several products' passages mixes their facts ("a
4-person, two-person and one-person pack" from three tents), unless each item names a passage (a listing of
products).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from ask_engine.guard.bindings import unsupported_stock
from ask_engine.guard.words import _negation_scopes, content_words

__all__ = [
    "ClaimCheck",
    "check_claims",
    "further_claims",
    "is_not_recorded",
    "list_items",
    "names",
    "negated_thing",
    "not_recorded_part",
    "unlisted_item",
]

_NOT_RECORDED = re.compile(
    r"\b(?:has|have|had|does|do|did)\s*(?:n't|\s+not)\s+(?:recorded|record|listed|list|stated|state|said|say|"
    r"mentioned|mention|specified|specify|provided|provide)\b|\bnot\s+(?:recorded|listed|stated|mentioned|specified)\b|"
    r"\bno\s+(?:record|information|details?|mention)\s+(?:of|about|on)\b",
    re.IGNORECASE,
)
_NEGATIVE_EXISTENCE = re.compile(
    r"\b(?:the\s+(?:shop|store)|we|it|they|this\s+\w+)\s+(?:does|do|did|can|will)\s*(?:n't|\s+not)\s+"
    r"(?:have|offer|provide|sell|stock|carry|accept|include|support|come\s+with)\s+(?P<thing>[^.;!?]+)"
    r"|\bthere\s+(?:is|are)\s+no\s+(?P<thing2>[^.;!?]+)",
    re.IGNORECASE,
)
_NEGATION = re.compile(r"\b(?:not|no|never|cannot|can't|don't|doesn't|isn't|aren't|won't|without|unavailable)\b", re.I)
_ITEM = r"[A-Za-z0-9][\w'’/+-]*(?:\s+[\w'’/+-]+){0,2}"
_LIST = re.compile(rf"(?P<items>{_ITEM}(?:\s*,\s*{_ITEM})+,?\s+(?:and|or)\s+{_ITEM})")
_PAIR = re.compile(
    rf"\b(?:in|of|with|includes?|including|comes?\s+in|available\s+in)\s+(?P<items>{_ITEM}\s+(?:and|or)\s+{_ITEM})"
)
_JOIN = re.compile(r"\s*,\s*(?:and\s+|or\s+)?|\s+(?:and|or)\s+")
_LEADING = re.compile(r"^(?:the|a|an|some|both|either|also)\s+", re.IGNORECASE)
_MIN_FRAGMENT_WORDS = 4


@dataclass(frozen=True)
class ClaimCheck:
    """What a sentence's claims amount to against the evidence."""

    verdict: Literal["ok", "unsupported", "negative_unsupported", "not_recorded", "fragment"]
    detail: str = ""  # the unsupported item, or the thing a negative claim names


def is_not_recorded(sentence: str) -> bool:
    """True for a sentence saying the shop has no record of something."""
    return bool(_NOT_RECORDED.search(sentence))


_FURTHER = re.compile(
    r"\s*[;:]\s*|,\s*(?:(?:so|but|and|because|therefore|hence|which means)\s+)?"
    r"|\s+(?:so|but|because|therefore|hence)\s+",
    re.IGNORECASE,
)


def further_claims(sentence: str) -> list[str]:
    """The clauses of a "not recorded" sentence beside its not-recorded part ("The shop has not recorded X, so you
    can't have Y": "you can't have Y"), which are claims of their own."""
    if not is_not_recorded(sentence):
        return []
    parts = [p.strip() for p in _FURTHER.split(sentence.strip().rstrip(".!?")) if p and p.strip()]
    return [p for p in parts if not is_not_recorded(p) and (len(content_words(p)) >= 2 or _NEGATION.search(p))]


def not_recorded_part(sentence: str) -> str | None:
    """The not-recorded clause of a sentence, as a sentence of its own ("The shop has not recorded X, so …" →
    "The shop has not recorded X."), or None."""
    for part in _FURTHER.split(sentence.strip().rstrip(".!?")):
        if part and is_not_recorded(part):
            return part.strip() + "."
    return None


def list_items(sentence: str) -> list[str]:
    """The items of the longest enumeration in `sentence` ("black, blue and red"; "in black and white")."""
    best: list[str] = []
    for pattern in (_LIST, _PAIR):
        for match in pattern.finditer(sentence):
            items = [_LEADING.sub("", i.strip()) for i in _JOIN.split(match.group("items")) if i and i.strip()]
            if len(items) > 1:
                # the match starts greedily ("comes in black"): the first item is as long as the longest other one
                width = max(len(i.split()) for i in items[1:])
                items[0] = " ".join(items[0].split()[-width:])
            if len(items) > len(best):
                best = items
    return best


def negated_thing(sentence: str) -> str | None:
    """What a negative existence claim says the shop lacks ("a customer service number"), else None."""
    match = _NEGATIVE_EXISTENCE.search(sentence)
    if match is None:
        return None
    thing = (match.group("thing") or match.group("thing2") or "").strip()
    return re.split(r"\s+(?:for|to|on|in|at|because|but|so|as)\s+", thing, maxsplit=1)[0].strip() or None


_TOKEN = re.compile(r"[\w'’&]+(?:[-/.][\w'’&]+)*")


def names(sentence: str) -> list[str]:
    """Runs of two or more capitalised words, with the numbers and hyphens inside them ("Lone Rover 2 Tent",
    "Aldergrove 3L Waterproof Jacket - Men's"): the names a sentence gives, which the evidence must give too."""
    tokens = [(m.group(0), m.start()) for m in _TOKEN.finditer(sentence)]
    runs: list[str] = []
    current: list[tuple[str, int]] = []

    def close() -> None:
        while current and not current[-1][0][:1].isupper():
            current.pop()  # a run ends on a name word, not on a number or a hyphen
        if sum(1 for t, _ in current if t[:1].isupper()) >= 2:
            start, end = current[0][1], current[-1][1] + len(current[-1][0])
            runs.append(sentence[start:end])
        current.clear()

    for n, (token, start) in enumerate(tokens):
        capital = token[:1].isupper() and not (n == 0 or sentence[:start].rstrip().endswith((".", "!", "?", ":")))
        inner = current and (token[:1].isdigit() or token.lower() in ("&", "of", "de", "la"))
        gap = current and sentence[current[-1][1] + len(current[-1][0]) : start].strip() not in ("", "-", "&")
        if gap:
            close()
            inner = False
        if capital or inner:
            current.append((token, start))
        else:
            close()
    close()
    return runs


def _polarity_differs(sentence: str, words: set[str], lines: Sequence[str]) -> bool:
    """The sentence says the other way round what the evidence says: it negates what no evidence line negates
    ("are not Black" against "Colours: Black"), or states without a negation what a line negates ("Do use fabric
    softener" against "Do not use fabric softener")."""
    scopes = [scope for scope in _negation_scopes(sentence) if scope]
    line_scopes = [(line, [sc for sc in _negation_scopes(line) if sc]) for line in lines]
    for scope in scopes:
        naming = [(line, negs) for line, negs in line_scopes if scope & content_words(line)]
        if naming and not any(any(scope & sc for sc in negs) for _, negs in naming):
            return True
    if not scopes and line_scopes:
        # only the lines the sentence copies count: those it shares most words with, and all of them must negate
        overlaps = [len(words & content_words(line)) for line, _ in line_scopes]
        best = max(overlaps)
        top = [line_scopes[n] for n, o in enumerate(overlaps) if o == best]
        if (
            all(negs for _, negs in top)
            and any(any(sc <= words for sc in negs) for _, negs in top)
            and all(best >= max(3, len(content_words(line)) // 2) for line, _ in top)
        ):
            return True
    return False


def unlisted_item(items: Sequence[str], evidence: Sequence[str]) -> str | None:
    """The first item of an enumeration the evidence does not give, or None.

    Every item must be in the evidence, and all of them in one passage (the passages of one product or page, whose
    first lines share the title before a section's " — ", count as one), unless every item is named by a passage's
    first line (products listed from their own passages)."""
    wanted = [(item, words) for item in items if (words := content_words(item))]
    if not wanted:
        return None
    groups: dict[str, set[str]] = {}
    heads: list[set[str]] = []
    for text in evidence:
        head = text.strip().split("\n", 1)[0]
        head = re.split(r"(?<=[.!?])\s", head, maxsplit=1)[0]
        document = head.split(" — ", 1)[0].strip(" .").lower()  # a section's title line: "Page — Section."
        groups.setdefault(document, set()).update(content_words(text))
        heads.append(content_words(head))
    every: set[str] = set().union(*groups.values())
    for item, words in wanted:
        if not words <= every:
            return item
    if len(wanted) < 2 or any(all(words <= group for _, words in wanted) for group in groups.values()):
        return None
    if all(any(words <= head for head in heads) for _, words in wanted):
        return None
    fullest = max(groups.values(), key=lambda group: sum(words <= group for _, words in wanted))
    return next(item for item, words in wanted if not words <= fullest)


def check_claims(sentence: str, evidence: Sequence[str]) -> ClaimCheck:
    """Check the claims of one sentence against the evidence texts it may draw on."""
    words = content_words(sentence)
    if is_not_recorded(sentence):
        # "The shop has not recorded." names nothing: a fragment; with a subject it is a not-recorded claim
        rest = _NOT_RECORDED.sub(" ", sentence)
        if len(sentence.split()) < _MIN_FRAGMENT_WORDS or not content_words(rest) - {"shop", "store"}:
            return ClaimCheck("fragment")
        return ClaimCheck("not_recorded")
    if not words:
        return ClaimCheck("fragment")
    evidence_words: set[str] = set()
    for text in evidence:
        evidence_words |= content_words(text)
    thing = negated_thing(sentence)
    if thing is not None:
        thing_words = content_words(thing)
        said = any(_NEGATION.search(text) and thing_words and thing_words <= content_words(text) for text in evidence)
        if not said:
            return ClaimCheck("negative_unsupported", thing)
    for scope in _negation_scopes(sentence):
        # "X is not reef safe" where the evidence never mentions anything reef safe: the shop says nothing, not "no"
        if scope and not scope & evidence_words:
            return ClaimCheck("unsupported", "negation: " + " ".join(sorted(scope)))
    texts = [line for text in evidence for line in re.split(r"\n|(?<=[.!?])\s+", text) if line.strip()]
    lines = [content_words(line) for line in texts]
    pieces = [p for p in re.split(r"(?<=[.!?])\s+", sentence) if p.strip()]
    if any(_polarity_differs(piece, content_words(piece), texts) for piece in pieces):
        return ClaimCheck("unsupported", "polarity")
    for name in names(sentence):
        # a name is given when one line of the evidence holds all its words ("Ridge Shoe" in "Ridge Trail Shoe -
        # Women's"), not when they are scattered ("Lone Rover 2 Tent" against "Lone Rover 1 Tent" and a "2")
        wanted = content_words(name)
        if wanted and not any(wanted <= line for line in lines):
            return ClaimCheck("unsupported", name)
    item = unlisted_item(list_items(sentence), evidence)
    if item is not None:
        return ClaimCheck("unsupported", item)
    stock = unsupported_stock(sentence, evidence)
    if stock is not None:
        return ClaimCheck("unsupported", "stock: " + stock)
    return ClaimCheck("ok")
