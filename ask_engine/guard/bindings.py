"""Claims that word overlap cannot see, because every word of the sentence is in the evidence.

- **Figure binding**: a figure belongs to the words next to it. "keeps drinks hot for 24 hours" against "keeps
  drinks cold for 24 hours or hot for 12 hours" uses only the evidence's words and numbers, but binds 24 hours to
  "hot", which the evidence binds to 12 hours. A figure (a number with a unit or currency) fails when the nearest
  content words on either side of it in the sentence occur in no evidence clause stating that figure, while one of
  them occurs, in a passage that states the figure, in a clause stating a different figure of the same kind.
  Clauses: evidence lines split on ";", ", ", " or ", " and " and "/", each clause of a "Label: value" line read
  with its label, every clause of a passage with the passage's title line.
- **Sweeping quantifiers**: "We only ship to the UK" makes a claim of exclusivity that "We ship to the UK" does not.
  A sentence using a quantifier of a group (exclusive: "only", "just", "solely"...; universal: "all", "every",
  "always"...) is supported only when a sentence it draws on uses a word of the same group.
- **Label flips**: "No, the jacket machine washable is not possible." against "Machine washable: yes." A clause that
  names every word of a "Label: yes" line and is negated (or follows an opening "No,") says the opposite.
- **Stock states**: "The tent is sold out." where the tent's own lines say "Availability: in stock". The words are
  in the evidence (another product is sold out, the FAQ says what happens to sold-out orders), but the product's
  stock is stated on its own "Label: value" lines (availability, variants): a stated state ("sold out", "in stock")
  must be one of the states those lines give, where the evidence has such lines.

The quantifiers and the values that mean "yes" are language data (`ask_engine/lexicon/<language>.json`,
`guard_quantifiers`, `guard_label_yes`, `guard_stock`), not code.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

from ask_engine.guard.figures import _UNIT_ALT, _Hard, _hard_items, _normalise_text
from ask_engine.guard.sentences import _lines, _split_line
from ask_engine.guard.words import _NEGATION_WORDS, _STOPWORDS, _WORD_RE, _stem, content_words

__all__ = [
    "flipped_label",
    "quantifier_words",
    "stock_states",
    "unbound_figures",
    "unsupported_quantifier",
    "unsupported_stock",
]

_LEXICON = Path(__file__).parents[1] / "lexicon"


@lru_cache(maxsize=8)
def _lexicon(language: str) -> dict[str, object]:
    path = _LEXICON / f"{language}.json"
    if not path.is_file():
        path = _LEXICON / "en.json"
    data: dict[str, object] = json.loads(path.read_text(encoding="utf-8"))
    return data


@lru_cache(maxsize=8)
def quantifier_words(language: str = "en") -> dict[str, tuple[str, ...]]:
    """The quantifier groups of a language: group name -> words and phrases (lower case)."""
    groups = _lexicon(language).get("guard_quantifiers") or {}
    assert isinstance(groups, dict)
    return {str(name): tuple(str(w).lower() for w in words) for name, words in groups.items()}


@lru_cache(maxsize=8)
def _yes_values(language: str) -> frozenset[str]:
    values = _lexicon(language).get("guard_label_yes") or ()
    assert isinstance(values, list)
    return frozenset(str(v).lower() for v in values)


@lru_cache(maxsize=8)
def _quantifier_res(language: str) -> dict[str, re.Pattern[str]]:
    return {
        group: re.compile(r"(?<![\w'-])(?:" + "|".join(re.escape(w) for w in words) + r")(?![\w'-])", re.IGNORECASE)
        for group, words in quantifier_words(language).items()
        if words
    }


def _quantified(text: str, language: str) -> list[tuple[str, set[str]]]:
    """Each quantifier in `text`: its group and the content word it governs (the next one, or at the end of the
    sentence the one before: "store credit only")."""
    normal = _normalise_text(text)
    found: list[tuple[str, set[str]]] = []
    for group, pattern in _quantifier_res(language).items():
        for match in pattern.finditer(normal):
            after = _content(normal[match.end() :])
            scope = after[:1] or _content(normal[: match.start()])[-1:]
            found.append((group, set(scope)))
    return found


# A sentence that says something is not done or not to be done ("Do not tumble dry", "is not sold", "Tumble dry: no")
# supports a "cannot" as well as one that says "cannot"; "there is nothing more to pay" does not.
_VERB_NEGATION = re.compile(
    r"\b(?:do|does|did|will|would|should|must|may|can|could|is|are|was|were|be|has|have)\s*(?:n't|\s+not)\b"
    r"|\bnever\b|\bnot\s+(?:be|to)\b",
    re.IGNORECASE,
)
_LABEL_NO = re.compile(r"^[^:\n]{1,60}:\s*no\b", re.IGNORECASE | re.MULTILINE)
_PROHIBITIVE = "prohibitive"


def _groups(text: str, language: str) -> set[str]:
    """The quantifier groups a supporting sentence uses; any verb negation or "Label: no" line counts as a
    prohibition."""
    groups = {g for g, _ in _quantified(text, language)}
    if _VERB_NEGATION.search(_normalise_text(text)) or _LABEL_NO.search(text):
        groups.add(_PROHIBITIVE)
    return groups


def unsupported_quantifier(sentence: str, support: Sequence[str], language: str = "en") -> str | None:
    """The quantifier group ("exclusive", "universal") `sentence` uses that no `support` sentence uses together with
    the word the quantifier governs ("We only ship to ..." is not supported by "we can only deliver ...")."""
    claimed = _quantified(sentence, language)
    if not claimed:
        return None
    stated = [(_groups(text, language), content_words(text)) for text in support]
    for group, scope in claimed:
        if not any(group in groups and all(_matches(w, words) for w in scope) for groups, words in stated):
            return group
    return None


# ----------------------------------------------------------------------------------------------- figure binding

_CLAUSE = re.compile(r";\s*|,\s+|\s+/\s+|\s+(?:or|and|but|while|whereas)\s+", re.IGNORECASE)
_LABEL = re.compile(r"^\s*([^:]{1,60}):\s+(.+)$")
_UNIT_AFTER = re.compile(rf"^\s?(?:-\s?\d[\d.,]*\s?)?(?:(?:\s|-)?(?:{_UNIT_ALT})(?![a-z0-9]))?", re.IGNORECASE)
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")


def _figures(text: str) -> list[_Hard]:
    return [h for h in _hard_items(text) if h.number is not None and (h.unit or h.currency)]


def _clauses(text: str) -> list[str]:
    """The clauses of one evidence passage, each read with its label and with the passage's title line."""
    lines = [line for line, _ in _lines(text)]
    title = lines[0] if len(lines) > 1 else ""
    out: list[str] = [title] if title else []
    for line in lines[1:] if title else lines:
        for sentence in _split_line(line):
            label = _LABEL.match(sentence)
            prefix, body = (label.group(1), label.group(2)) if label else ("", sentence)
            for clause in _CLAUSE.split(body):
                if clause.strip():
                    out.append(f"{title} {prefix} {clause}".strip())
    return out


class _Passage:
    def __init__(self, text: str) -> None:
        self.clauses = [(content_words(c), _figures(c)) for c in _clauses(text)]
        self.figures = {h.text for _, hs in self.clauses for h in hs}


@lru_cache(maxsize=4096)
def _passage(text: str) -> _Passage:
    return _Passage(text)


def _matches(word: str, words: set[str]) -> bool:
    """`word` is in `words`, or shares a stem of four letters or more with one ("weigh" / "weight")."""
    if word in words:
        return True
    return len(word) >= 4 and any(len(w) >= 4 and (w.startswith(word) or word.startswith(w)) for w in words)


def _content(text: str) -> list[str]:
    return [_stem(w) for w in _WORD_RE.findall(text.lower()) if w not in _STOPWORDS and w not in _NEGATION_WORDS]


def _neighbours(clause: str, figure: _Hard) -> list[str]:
    """The nearest content word before and after `figure` in a clause of the answer sentence."""
    first = (figure.number or "").lstrip("-").split("-")[0]
    match = re.search(rf"(?<![\d.]){re.escape(first)}(?![\d])", clause)
    if match is None:
        return []
    before = [w for w in _content(clause[: match.start()]) if not w[:1].isdigit()]
    after_text = clause[match.end() :]
    after_text = after_text[_UNIT_AFTER.match(after_text).end() :]  # type: ignore[union-attr]
    after = [w for w in _content(after_text) if not w[:1].isdigit()]
    return [*before[-1:], *after[:1]]


def _same_kind(a: _Hard, b: _Hard) -> bool:
    return a.unit == b.unit and a.currency == b.currency and a.text != b.text


def unbound_figures(sentence: str, evidence: Sequence[str]) -> list[str]:
    """The figures of `sentence` bound to words that the evidence binds to a different figure of the same kind."""
    text = _THOUSANDS.sub("", _normalise_text(sentence))
    passages = [_passage(e) for e in evidence]
    wrong: list[str] = []
    for clause in _CLAUSE.split(text):
        for figure in _figures(clause):
            near = _neighbours(clause, figure)
            if not near:
                continue
            stating = [p for p in passages if figure.text in p.figures]
            if not stating:
                continue  # an unknown figure is the hard check's to catch
            bound = any(
                any(_matches(w, words) for w in near)
                for p in stating
                for words, figures in p.clauses
                if any(h.text == figure.text for h in figures)
            )
            if bound:
                continue
            elsewhere = any(
                any(_matches(w, words) for w in near) and any(_same_kind(figure, h) for h in figures)
                for p in stating
                for words, figures in p.clauses
            )
            if elsewhere:
                wrong.append(figure.text)
    return list(dict.fromkeys(wrong))


# ----------------------------------------------------------------------------------------------- label flips

_OPENING_NO = re.compile(r"^\s*no\b\s*[,.!:;-]", re.IGNORECASE)
_NEGATED = re.compile(r"(?<![\w'])(?:" + "|".join(re.escape(w) for w in sorted(_NEGATION_WORDS)) + r")(?![\w'])")


def flipped_label(sentence: str, evidence_line: str, language: str = "en") -> bool:
    """True when `evidence_line` is a "Label: yes" line and a clause of `sentence` that names all the label's words
    is negated, or follows an opening "No,"."""
    label = _LABEL.match(_normalise_text(evidence_line).strip())
    if label is None or label.group(2).strip().rstrip(".").strip().lower() not in _yes_values(language):
        return False
    wanted = content_words(label.group(1))
    if not wanted:
        return False
    text = _normalise_text(sentence).lower()
    opening = _OPENING_NO.match(text)
    parts = [p for p in _CLAUSE.split(text[opening.end() :] if opening else text) if p.strip()]
    for n, part in enumerate(parts):
        if wanted <= content_words(part) and (_NEGATED.search(part) or (opening is not None and n == 0)):
            return True
    return False


# ----------------------------------------------------------------------------------------------- stock states


@lru_cache(maxsize=8)
def _stock_patterns(language: str) -> tuple[tuple[str, re.Pattern[str]], ...]:
    """(state, pattern) for each stock state of the language, the longer phrases first within a state."""
    groups = _lexicon(language).get("guard_stock") or {}
    assert isinstance(groups, dict)
    out: list[tuple[str, re.Pattern[str]]] = []
    for state, phrases in groups.items():
        words = sorted((str(p).lower() for p in phrases), key=len, reverse=True)
        if words:
            out.append((str(state), re.compile(r"(?<![\w-])(?:" + "|".join(map(re.escape, words)) + r")(?![\w-])")))
    return tuple(out)


def stock_states(text: str, language: str = "en") -> set[str]:
    """The stock states `text` states; a state phrase inside a longer one of another state ("not in stock" holds
    "in stock") counts only as the longer one."""
    low = _normalise_text(text).lower()
    found: set[str] = set()
    spans: list[tuple[int, int]] = []
    matches = [
        (m.end() - m.start(), m.start(), m.end(), state)
        for state, pat in _stock_patterns(language)
        for m in pat.finditer(low)
    ]
    for _, start, end, state in sorted(matches, reverse=True):
        if any(start < e and s < end for s, e in spans):
            continue
        spans.append((start, end))
        found.add(state)
    return found


def unsupported_stock(sentence: str, evidence: Sequence[str], language: str = "en") -> str | None:
    """The stock state `sentence` states that none of the evidence's "Label: value" stock lines gives, or None
    (also when the evidence has no such line: then the overlap checks judge the sentence). Where the sentence names
    a product, only the stock lines of the passages whose title line (their first) it names most count."""
    stated = stock_states(sentence, language)
    if not stated:
        return None
    words = content_words(sentence)
    by_text: list[tuple[int, set[str]]] = []
    for text in evidence:
        lines = re.split(r"\n|(?<=[.!?])\s+", _normalise_text(text).strip())
        states: set[str] = set()
        for line in lines[1:]:
            label = _LABEL.match(line)
            if label is not None:
                states |= stock_states(label.group(2), language)
        if states:
            by_text.append((len(words & content_words(lines[0])), states))
    if not by_text:
        return None
    # the product the sentence names (the passages whose title line it shares most words with), else any
    named = max(n for n, _ in by_text)
    given = set().union(*(states for n, states in by_text if n == named))
    wrong = sorted(stated - given)
    return wrong[0] if wrong else None
