"""Eval cases: the JSONL case format (question, ids, context, follow-ups, expectations) parsed and checked."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ask_engine.errors import CaseError

Mode = Literal["hybrid", "dense", "lexical"]
MODES: tuple[Mode, ...] = ("hybrid", "dense", "lexical")
CATEGORIES = (
    "policy",
    "product_attribute",
    "not_recorded",
    "ids",
    "shipping_country",
    "operation",
    "disclosure",
    "off_topic",
    "injection",
    "unknown_id",
    "followup",
    "empty",
)


@dataclass(frozen=True)
class Pattern:
    """An expected or forbidden text: a plain string (case-insensitive, whitespace-normalised) or `/regex/flags`."""

    source: str
    regex: re.Pattern[str]

    @classmethod
    def parse(cls, raw: str) -> Pattern:
        match = re.fullmatch(r"/(.*)/([a-z]*)", raw, flags=re.DOTALL)
        if match:
            flags = 0
            for letter in match.group(2):
                if letter not in "ims":
                    raise ValueError(f"unsupported regex flag {letter!r} in {raw!r} (use i, m or s)")
                flags |= {"i": re.IGNORECASE, "m": re.MULTILINE, "s": re.DOTALL}[letter]
            try:
                return cls(raw, re.compile(match.group(1), flags))
            except re.error as exc:
                raise ValueError(f"invalid regex {raw!r}: {exc}") from None
        words = [re.escape(w) for w in _normalise(raw).split()]
        if not words:
            raise ValueError("an expected text must not be empty")
        return cls(raw, re.compile(r"\s+".join(words), re.IGNORECASE))

    def found_in(self, text: str) -> bool:
        return bool(self.regex.search(_normalise(text)))


def _normalise(text: str) -> str:
    """Typographic variants read the same: curly quotes, dashes, non-breaking spaces."""
    return (
        text.replace("’", "'")
        .replace("‘", "'")
        .replace("“", '"')
        .replace("”", '"')
        .replace("\u2013", "-")
        .replace("\u2014", "-")
        .replace("\u00a0", " ")
        .replace("\u202f", " ")
    )


@dataclass(frozen=True)
class LinkExpect:
    type: str
    id: str | None = None
    url: str | None = None


@dataclass(frozen=True)
class MessageExpect:
    type: str
    code: str


@dataclass(frozen=True)
class Expect:
    answerable: bool
    facts: tuple[Pattern, ...] = ()
    must_not: tuple[Pattern, ...] = ()
    links: tuple[LinkExpect, ...] | None = None  # None: links are not checked for this turn
    messages: tuple[MessageExpect, ...] | None = None  # None: messages are not checked for this turn
    evidence: tuple[str, ...] = ()  # document ids that should be among the evidence
    # answer-carries-evidence alternatives (product-QA cases): the answer must carry every text of one of them
    evidence_any: tuple[tuple[str, ...], ...] = ()


@dataclass(frozen=True)
class FollowUp:
    query: str
    expect: Expect
    ids: tuple[str, ...] = ()
    context: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Case:
    id: str
    category: str
    query: str
    expect: Expect
    ids: tuple[str, ...] = ()
    context: dict[str, Any] = field(default_factory=dict)
    followups: tuple[FollowUp, ...] = ()
    note: str = ""
    line: int = 0

    def turns(self) -> list[tuple[str, tuple[str, ...], dict[str, Any], Expect]]:
        first = [(self.query, self.ids, self.context, self.expect)]
        return first + [(f.query, f.ids, f.context, f.expect) for f in self.followups]


_CASE_KEYS = {"id", "category", "query", "ids", "context", "expect", "followups", "note"}
_EXPECT_KEYS = {"answerable", "facts", "must_not", "links", "messages", "evidence", "evidence_any"}
_FOLLOWUP_KEYS = {"query", "expect", "ids", "context"}


def _strings(value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"{where} must be a list of strings")
    return tuple(value)


def _parse_expect(raw: Any, where: str) -> Expect:
    if not isinstance(raw, dict):
        raise ValueError(f"{where} must be an object")
    unknown = set(raw) - _EXPECT_KEYS
    if unknown:
        raise ValueError(f"{where} has unknown field(s) {sorted(unknown)}; allowed: {sorted(_EXPECT_KEYS)}")
    if not isinstance(raw.get("answerable"), bool):
        raise ValueError(f"{where}.answerable must be true or false")
    links: tuple[LinkExpect, ...] | None = None
    if "links" in raw:
        if not isinstance(raw["links"], list):
            raise ValueError(f"{where}.links must be a list")
        items = []
        for n, link in enumerate(raw["links"]):
            if not isinstance(link, dict) or not isinstance(link.get("type"), str) or set(link) - {"type", "id", "url"}:
                raise ValueError(f"{where}.links[{n}] must be {{type, id?, url?}}")
            items.append(LinkExpect(link["type"], link.get("id"), link.get("url")))
        links = tuple(items)
    messages: tuple[MessageExpect, ...] | None = None
    if "messages" in raw:
        if not isinstance(raw["messages"], list):
            raise ValueError(f"{where}.messages must be a list")
        found = []
        for n, message in enumerate(raw["messages"]):
            if (
                not isinstance(message, dict)
                or set(message) != {"type", "code"}
                or message["type"] not in ("info", "warning", "error")
                or not isinstance(message["code"], str)
            ):
                raise ValueError(f"{where}.messages[{n}] must be {{type: info|warning|error, code}}")
            found.append(MessageExpect(message["type"], message["code"]))
        messages = tuple(found)
    return Expect(
        answerable=raw["answerable"],
        facts=tuple(Pattern.parse(s) for s in _strings(raw.get("facts", []), f"{where}.facts")),
        must_not=tuple(Pattern.parse(s) for s in _strings(raw.get("must_not", []), f"{where}.must_not")),
        links=links,
        messages=messages,
        evidence=_strings(raw.get("evidence", []), f"{where}.evidence"),
        evidence_any=_alternatives(raw.get("evidence_any", []), f"{where}.evidence_any"),
    )


def _alternatives(value: Any, where: str) -> tuple[tuple[str, ...], ...]:
    if not isinstance(value, list) or not all(isinstance(g, list) for g in value):
        raise ValueError(f"{where} must be a list of lists of strings")
    return tuple(_strings(g, f"{where}[{n}]") for n, g in enumerate(value))


def parse_case(raw: Any, line: int = 0) -> Case:
    """Validate one case object (a parsed JSONL line); raises ValueError saying what is wrong."""
    if not isinstance(raw, dict):
        raise ValueError("a case must be a JSON object")
    unknown = set(raw) - _CASE_KEYS
    if unknown:
        raise ValueError(f"unknown field(s) {sorted(unknown)}; allowed: {sorted(_CASE_KEYS)}")
    for key in ("id", "category"):
        if not isinstance(raw.get(key), str) or not raw[key].strip():
            raise ValueError(f"{key} must be a non-empty string")
    if not isinstance(raw.get("query"), str):
        raise ValueError("query must be a string (it may be empty)")
    if "expect" not in raw:
        raise ValueError("expect is required")
    context = raw.get("context", {})
    if not isinstance(context, dict):
        raise ValueError("context must be an object")
    followups = []
    for n, item in enumerate(raw.get("followups", [])):
        where = f"followups[{n}]"
        if not isinstance(item, dict) or set(item) - _FOLLOWUP_KEYS or not isinstance(item.get("query"), str):
            raise ValueError(f"{where} must be {{query, expect, ids?, context?}}")
        followups.append(
            FollowUp(
                query=item["query"],
                expect=_parse_expect(item.get("expect"), f"{where}.expect"),
                ids=_strings(item.get("ids", []), f"{where}.ids"),
                context=dict(item.get("context", {})),
            )
        )
    return Case(
        id=raw["id"],
        category=raw["category"],
        query=raw["query"],
        expect=_parse_expect(raw["expect"], "expect"),
        ids=_strings(raw.get("ids", []), "ids"),
        context=context,
        followups=tuple(followups),
        note=str(raw.get("note", "")),
        line=line,
    )


def load_cases(path: str | Path) -> list[Case]:
    """Read and validate a JSONL case file; a bad line raises CaseError naming the file and line number."""
    path = Path(path)
    try:
        text = path.read_text("utf-8")
    except OSError as exc:
        raise CaseError(f"{path}: cannot read: {exc.strerror or exc}") from None
    cases: list[Case] = []
    seen: dict[str, int] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("//"):
            continue
        try:
            case = parse_case(json.loads(line), number)
        except json.JSONDecodeError as exc:
            raise CaseError(f"{path}:{number}: invalid JSON: {exc.msg} (column {exc.colno})") from None
        except ValueError as exc:
            raise CaseError(f"{path}:{number}: {exc}") from None
        if case.id in seen:
            raise CaseError(f"{path}:{number}: duplicate case id {case.id!r} (first on line {seen[case.id]})")
        seen[case.id] = number
        cases.append(case)
    if not cases:
        raise CaseError(f"{path}: no cases")
    return cases
