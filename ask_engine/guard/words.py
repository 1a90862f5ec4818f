"""Content words, negation scopes, capitalised names and which products a sentence is about: the faithfulness
scorer's reading of a sentence."""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ask_engine.types import Passage
from ask_engine.guard.figures import _CODE_RE, _SKU_RE, _normalise_text
from ask_engine.guard.sentences import _word_set

_STOPWORDS = _word_set(
    """
a about above after again against all also am an and any are aren't as at be because been before being below
between both but by can can't cannot could couldn't did didn't do does doesn't doing don't down during each
either else ever every few for from further get gets got had hadn't has hasn't have haven't having he her here
hers herself him himself his how however i i'd i'll i'm i've if in into is isn't it it's its itself just let's
may me might more most much must mustn't my myself need needs neither nor of off on once one only or other ought
our ours ourselves out over own per please quite rather really same shall shan't she should shouldn't so some
such than that that's the their theirs them themselves then there there's these they they'd they'll they're
they've this those though through thus to too under until up upon us very via was wasn't we we'd we'll we're
we've were weren't what what's when where whether which while who whom whose why will with within without won't
would wouldn't yes yet you you'd you'll you're you've your yours yourself yourselves sure certainly absolutely
unfortunately sadly whoever whatever whichever great good happy glad help note noted currently available there's it's sorry thanks
thank hi hello okay ok shop
"""
)
# Negation cues keep their meaning in the negation check but are not content words.
_NEGATION_WORDS = _word_set(
    "not no never none nothing neither nor without cannot can't don't doesn't didn't isn't aren't wasn't weren't "
    "won't wouldn't shouldn't couldn't hasn't haven't hadn't mustn't needn't unable false"
)
_WORD_RE = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")


@lru_cache(maxsize=65536)
def _stem(word: str) -> str:
    """A light, deterministic English stemmer: plural, -ing, -ed, -able/-ible, -ly, final -e.

    Both sides of every comparison go through it, so consistency matters more than linguistic accuracy.
    """
    w = word
    if w.endswith("'s"):
        w = w[:-2]
    if len(w) <= 3:
        return w
    if w.endswith("ies") and len(w) > 4:
        w = w[:-3] + "y"
    elif w.endswith(("sses", "shes", "ches", "xes")):
        w = w[:-2]
    elif w.endswith("s") and not w.endswith(("ss", "us", "is")):
        w = w[:-1]
    for suffix in ("ingly", "edly", "ing", "ed", "able", "ible", "ly", "al"):
        if w.endswith(suffix) and len(w) - len(suffix) >= (4 if suffix == "al" else 3):
            w = w[: -len(suffix)]
            if len(w) > 3 and w[-1] == w[-2] and w[-1] not in "lsz":  # shipped → ship
                w = w[:-1]
            break
    if w.endswith("e") and len(w) > 3:
        w = w[:-1]
    return w


def _words(text: str) -> list[str]:
    text = re.sub(r"\b(\d{1,2}):00\s?([ap])\.?m\b\.?", r"\1\2m", _normalise_text(text).lower())
    return _WORD_RE.findall(text)


def content_words(text: str) -> set[str]:
    """Lower-case stems of the words that carry meaning (stopwords and negation cues removed; numbers kept)."""
    return {_stem(w) for w in _words(text) if w not in _STOPWORDS and w not in _NEGATION_WORDS}


def passage_subject(passage: Passage) -> str:
    """What a passage is about for `attributable`: the product's title for a product's passage, else ""."""
    return passage.title if passage.kind == "product" else ""


def attributable(sentence: str, subjects: Sequence[str]) -> list[int]:
    """Indices of the passages `sentence` may draw on, given each passage's subject (a product title, or "").

    A product whose title the sentence only partly names, while it names more of another's ("the men's Stridewell"
    against "Stridewell Trail Shoe - Women's" and "Stridewell Trail Shoe - Men's"), is not what the sentence is
    about: its passages are left out. Products the sentence does not name at all stay (a sentence need not repeat
    its product's name), as do the non-product passages.
    """
    everything = list(range(len(subjects)))
    titles = {t for t in subjects if t}
    if len(titles) < 2:
        return everything
    words = content_words(sentence)
    matched = {t: words & content_words(t) for t in titles}
    outranked = {t for t, m in matched.items() if m and any(m < other for o, other in matched.items() if o != t)}
    if not outranked:
        return everything
    return [i for i, subject in enumerate(subjects) if subject not in outranked]


def names_products(sentence: str, subjects: Sequence[str]) -> set[str]:
    """The product titles among `subjects` that `sentence` shares a content word with."""
    words = content_words(sentence)
    return {t for t in subjects if t and words & content_words(t)}


def names_recognisably(sentence: str, title: str) -> bool:
    """True when `sentence` names the product `title` as a reader would recognise it: by at least half the words of
    its title, or by one of its names (a capitalised title word, capitalised in the sentence too, past its first
    word). "Care: Backflush the filter after each trip." does not name the "Clearstream Filter Bottle 600 ml"."""
    shared = content_words(sentence) & content_words(title)
    if shared and 2 * len(shared) >= len(content_words(title)):
        return True
    names = {m.group(1).lower() for m in _CAPITALISED.finditer(title)}
    first = re.match(r"\W*[\w'’-]+", sentence)
    rest = sentence[first.end() :] if first else sentence
    return any(m.group(1).lower() in names for m in _CAPITALISED.finditer(rest))


def names_no_product(sentence: str, subjects: Sequence[str]) -> bool:
    """True when `sentence` shares no content word with any product title among `subjects`."""
    return not names_products(sentence, subjects)


def asked_about(query: str, subjects: Sequence[str]) -> list[int]:
    """Indices of the passages a question is about: where it names some products' titles more than others' ("the
    Summitline down" against "Summitline Down Jacket" and "Pinecrest -5 Down Sleeping Bag"), the products it names
    most, and the non-product passages. A question naming no product is about every passage.

    An answer sentence that names no product of its own is about the product asked about: it may not state another
    product's facts ("700 fill power" copied from a sleeping bag into an answer about a jacket).
    """
    everything = list(range(len(subjects)))
    titles = {t for t in subjects if t}
    if len(titles) < 2:
        return everything
    words = content_words(query)
    matched = {t: len(words & content_words(t)) for t in titles}
    best = max(matched.values())
    if not best:
        return everything
    return [i for i, subject in enumerate(subjects) if not subject or matched[subject] == best]


def _attributable(sentence: str, evidence: Sequence[str], subjects: Sequence[str] | None) -> list[str]:
    if not subjects or len(subjects) != len(evidence):
        return list(evidence)
    return [evidence[i] for i in attributable(sentence, subjects)]


_SCOPE_END = re.compile(
    r"[,.;:!?()\[\]—]|\b(?:but|however|while|whereas|though|and|or|so|because|if|when|which|unless|until)\b"
)
_AFFIX_NEGATION = re.compile(r"\bnon-([a-z]+)|\b([a-z]+)-free\b")
_LABEL_NEGATIVE = re.compile(r"^\s*([^:]{1,60}):\s*(?:no|false|none|not recorded|n/a)\s*\.?\s*$", re.IGNORECASE)
_SCOPE_WORDS = 4


def _negation_scopes(sentence: str) -> list[set[str]]:
    """For each negation in `sentence`, the content-word stems it governs (up to the next clause boundary)."""
    text = _normalise_text(sentence).lower()
    scopes: list[set[str]] = []
    label = _LABEL_NEGATIVE.match(text)
    if label:
        scopes.append(content_words(label.group(1)))
    for m in _AFFIX_NEGATION.finditer(text):
        word = m.group(1) or m.group(2)
        # "free delivery" is not a negation, "PFC-free" is; "carefree" never matches the hyphenated pattern
        scopes.append({_stem(word)})
    for m in re.finditer(r"[a-z0-9]+(?:'[a-z]+)?", text):
        token = m.group(0)
        if token not in _NEGATION_WORDS or token == "false":
            continue
        rest = text[m.end() :]
        end = _SCOPE_END.search(rest)
        window = rest[: end.start()] if end else rest
        words = [_stem(w) for w in _WORD_RE.findall(window) if w not in _STOPWORDS and w not in _NEGATION_WORDS]
        if words:
            scopes.append(set(words[:_SCOPE_WORDS]))
    return scopes


_CAPITALISED = re.compile(r"(?<![\w'’-])([A-Z][A-Za-z'’]*(?:-[A-Za-z]+)*)")
_SENTENCE_START = re.compile(r"(?:^|[;.!?]\s+|[\"“(\[]\s*|—\s*|-\s+)$")


_INTERJECTIONS = frozenset({"ok", "hi"})  # "OK" is a word in capitals, not an abbreviation
_ACRONYM = re.compile(r"(?<![\w'’-])([A-Z]{2,})(?![\w'’-])")


def _stopword_acronyms(sentence: str) -> set[str]:
    """Upper-case abbreviations that read as a common word in lower case ("US", "IT"): `_entities` lower-cases and
    drops them as stopwords, so they are checked apart, case and all. Not in a sentence written in capitals."""
    letters = [c for c in sentence if c.isalpha()]
    if not letters or sum(c.isupper() for c in letters) * 2 > len(letters):
        return set()
    found = {m.group(1) for m in _ACRONYM.finditer(_normalise_text(sentence))}
    return {a for a in found if a.lower() in _STOPWORDS and a.lower() not in _NEGATION_WORDS | _INTERJECTIONS}


def missing_acronyms(sentence: str, texts: Sequence[str]) -> list[str]:
    """The stopword-like abbreviations of `sentence` that none of `texts` writes ("1 extra day for US delivery"
    against evidence that only ever says "UK")."""
    wanted = _stopword_acronyms(sentence)
    if not wanted:
        return []
    return sorted(a for a in wanted if not any(re.search(rf"(?<![\w'’-]){a}(?![\w'’-])", t) for t in texts))


def _entities(sentence: str, known: frozenset[str] = frozenset()) -> set[str]:
    """Capitalised words that name something, lower-cased (SKUs and model codes are hard tokens instead).

    A capitalised word at the start of a sentence or clause counts when it starts a multi-word name ("Fort
    William") or is one of the `known` names of the evidence ("Mastercard refunds ..."); "Returns are free" names
    nothing.
    """
    text = _CODE_RE.sub(" ", _SKU_RE.sub(" ", _normalise_text(sentence)))
    found: set[str] = set()
    matches = list(_CAPITALISED.finditer(text))
    for i, m in enumerate(matches):
        lowered = re.sub(r"'s$|'$", "", m.group(1).lower())
        if lowered in _STOPWORDS or lowered in _NEGATION_WORDS or len(lowered) < 2:
            continue
        if _SENTENCE_START.search(text[: m.start()]):
            nxt = matches[i + 1] if i + 1 < len(matches) else None
            multiword = nxt is not None and nxt.start() == m.end() + 1
            if not multiword and lowered not in known:
                continue
        for part in lowered.split("-"):
            if part and part not in _STOPWORDS:
                found.add(part)
    return found
