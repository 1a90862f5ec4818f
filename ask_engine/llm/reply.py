"""The model's reply read into a cited Draft: JSON (or salvaged text) → sentences, each with the evidence numbers it
cites; refusals and claimed actions recognised; Markdown kept only where it says what the plain text says."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from ask_engine.errors import GeneratorUnavailable
from ask_engine.guard.faithfulness import classify, content_words, hard_tokens, split_sentences
from ask_engine.types import Draft, DraftKind, Sentence, Task

if TYPE_CHECKING:
    from ask_engine.guard.faithfulness import FaithfulnessScorer


ANSWER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "answer": {"type": "string"},
        "citations": {"type": "array", "items": {"type": "integer"}},
        "markdown": {"type": "string"},
    },
    "required": ["answer", "citations"],
}


_ANSWER_KEYS = ("answer", "plain", "text", "response", "content")
_CITE = re.compile(
    r"\s*[\[【]\s*(?:(?:passages?|sources?|docs?|documents?|evidence|refs?)\s*)?#?\s*"
    r"(\d{1,3}(?:\s*(?:,|;|and|&|-|–)\s*#?\s*\d{1,3})*)\s*[\]】](?!\()",
    re.IGNORECASE,
)
_LEADING_CITES = re.compile(r"^(?:\s*[\[【][^\]】]{0,40}[\]】](?!\())+")
_LABEL = re.compile(r"^\s*(?:\*\*)?(?:the\s+)?(?:final\s+)?answer(?:\s+is)?(?:\*\*)?\s*:\s*", re.IGNORECASE)
_LEAD_PUNCT = re.compile(r"^[\s,;:.)\]}–—-]+")
_ECHO_TAG = re.compile(r"</?\s*(?:answer|evidence|question|history|buyer)\s*>", re.IGNORECASE)
_JSONISH = re.compile(r"\{|\[\s*[{\"\]]")  # an object or array, not a reply opening with a "[1]" citation
_CODE_FENCE = re.compile(r"^\s*```[\w-]*\s*$", re.MULTILINE)
_WORDS = re.compile(r"[^\W\d_]{2,}")
_TERMINAL = re.compile(r"[.!?…]['\"”’)\]*_]*$")

# The model declining to help at all (not the shop saying it has no record).
_MODEL_REFUSAL = re.compile(
    r"\bas an ai\b|\b(?:as|i am|i'm) (?:just |only )?an? (?:ai |large )?language model\b"
    r"|\bi(?:'m| am) (?:sorry|afraid)\b[^.]*\b(?:can(?:not|'t)|unable|not able)\b[^.]*"
    r"\b(?:help|assist|answer|provide|comply|do that)\b"
    r"|\bi (?:can(?:not|'t)|won't|will not|am unable to|'m unable to) (?:help|assist) with (?:that|this)\b"
    r"|\bi (?:can(?:not|'t)|won't|will not) (?:answer|comply)\b|\bi must decline\b",
    re.IGNORECASE,
)
# A sentence claiming the assistant changed something: ask is read-only, so such a sentence is never true.
_ACTION_VERBS = (
    r"(?:added|placed|cancell?ed|applied|changed|updated|removed|processed|started|issued|booked|refunded|created|"
    r"submitted|emptied|reserved|initiated|arranged|scheduled|subscribed|unsubscribed|deleted|modified|redeemed|"
    r"activated|sent you|emailed you)"
)
_ACTION_CLAIM = re.compile(
    rf"\b(?:i|we)(?:'ve| have| has)?(?:\s+(?:just|already|now|successfully))?\s+{_ACTION_VERBS}\b"
    rf"|\byour\s+(?:[\w-]+\s+){{0,3}}(?:has|have|is|was|were)\s+(?:now\s+|just\s+|already\s+|successfully\s+)?"
    rf"(?:been\s+)?{_ACTION_VERBS}\b",
    re.IGNORECASE,
)
_CONDITIONAL = re.compile(r"\b(?:if|once|when|whenever|after|before|until|unless|as soon as)\b", re.IGNORECASE)
# A refusal-shaped sentence with a second clause ("..., so we cannot offer refunds") may state something, and the
# guard checks meta sentences for numbers only: such a sentence is treated as a claim.
_SECOND_CLAUSE = re.compile(
    r"[,;:()]|\b(?:but|however|although|though|whereas|while|except|so|because|therefore|thus|hence|since|instead)\b"
    r"|\b(?:and|or)\s+(?:we|you|i|it|they|this|that|these|there|our|its|their|the shop)\b",
    re.IGNORECASE,
)
_MD_LINK = re.compile(r"(!?)\[([^\]\n]*)\]\(\s*<?([^)\s>]*)>?(?:\s+\"[^\"]*\")?\s*\)")
_HTML_TAG = re.compile(r"</?[A-Za-z][^<>]*>")


@dataclass(frozen=True)
class Reply:
    """What the model said: the answer text (inline [n] markers kept), optional markdown, global citations."""

    answer: str
    markdown: str | None = None
    citations: tuple[int, ...] = ()
    structured: bool = False  # the reply was a JSON object


def _ints(value: Any) -> list[int]:
    """Citation numbers from whatever shape the model used: [1, 3], ["1"], "1, 3", [[2]], "[2]"."""
    if isinstance(value, bool):
        return []
    if isinstance(value, int):
        return [value]
    if isinstance(value, float) and value.is_integer():
        return [int(value)]
    if isinstance(value, str):
        return [int(n) for n in re.findall(r"\d{1,3}", value)]
    if isinstance(value, list | tuple):
        return [n for item in value for n in _ints(item)]
    return []


def _text(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        return " ".join(value)
    return None


def _json_objects(text: str) -> Iterator[dict[str, Any]]:
    """Every JSON object in `text` (bare, in a code fence, or after some chatter)."""
    decoder = json.JSONDecoder(strict=False)  # small models put raw newlines inside strings
    for match in re.finditer(r"\{", text):
        try:
            obj, _ = decoder.raw_decode(text, match.start())
        except ValueError:
            continue
        if isinstance(obj, dict):
            yield obj


def _salvage_answer(text: str) -> str | None:
    """The complete sentences of a JSON "answer" string cut off by max_tokens."""
    match = re.search(r'"(?:answer|plain)"\s*:\s*"((?:[^"\\]|\\.)*)', text)
    if not match:
        return None
    raw = match.group(1)
    try:
        value = json.loads(f'"{raw}"')
    except ValueError:
        value = raw.rstrip("\\").replace('\\"', '"').replace("\\n", "\n")
    return str(value)


def _drop_unfinished(text: str) -> str:
    """Without the trailing sentence that max_tokens cut off mid-way."""
    sentences = split_sentences(text)
    if sentences and not _TERMINAL.search(_CITE.sub("", sentences[-1]).rstrip()):
        sentences = sentences[:-1]
    return " ".join(sentences)


def parse_reply(content: str | None, *, truncated: bool = False) -> Reply:
    """The answer in a model's reply: a JSON object (bare, fenced or embedded in text), else the text itself.

    Raises GeneratorUnavailable when nothing usable is there: empty output, JSON without an answer, broken JSON,
    or text without words. `truncated`: the reply was cut off by max_tokens (an unfinished sentence is dropped).
    """
    text = (content or "").strip()
    if not text:
        raise GeneratorUnavailable("the model returned an empty reply")
    for obj in _json_objects(text):
        answer = next((t for k in _ANSWER_KEYS if (t := _text(obj.get(k))) is not None), None)
        if answer is None:
            continue
        markdown = _text(obj.get("markdown"))
        cites = _ints(obj.get("citations", obj.get("sources", obj.get("cites", []))))
        return Reply(answer=answer, markdown=markdown, citations=tuple(dict.fromkeys(cites)), structured=True)
    stripped = _CODE_FENCE.sub("", text).strip()
    if _JSONISH.match(stripped):
        salvaged = _salvage_answer(stripped) if truncated else None
        if salvaged and salvaged.strip():
            return Reply(answer=_drop_unfinished(salvaged), structured=True)
        raise GeneratorUnavailable("the model returned malformed JSON")
    answer = _LABEL.sub("", stripped)
    if truncated:
        answer = _drop_unfinished(answer)
    return Reply(answer=answer)


def markdown_plain(text: str) -> str:
    """Plain text of one inline Markdown fragment ("**Yes**, see [returns](/r)" -> "Yes, see returns")."""
    if not re.search(r"[*_`\[\]<>#~\\]", text):
        return text
    from markdown_it import MarkdownIt

    blocks = MarkdownIt("commonmark").enable("strikethrough").parseInline(text)
    out: list[str] = []
    for token in (blocks[0].children or []) if blocks else []:
        if token.type in ("text", "code_inline"):
            out.append(token.content)
        elif token.type in ("softbreak", "hardbreak"):
            out.append(" ")
        elif token.type == "image":
            out.append(token.content)
    return re.sub(r"\s+", " ", "".join(out)).strip()


def _safe_markdown(text: str, allowed_urls: set[str]) -> str:
    """Markdown without raw HTML, images, or links to anything but the evidence's own pages (a model, or text
    injected into the evidence, must not be able to send the buyer elsewhere)."""

    def link(m: re.Match[str]) -> str:
        image, label, url = m.group(1), m.group(2), m.group(3)
        if image:
            return label
        return m.group(0) if url.split("#")[0].rstrip("/") in allowed_urls else label

    return _HTML_TAG.sub("", _MD_LINK.sub(link, text))


def _cite_numbers(group: str) -> list[int]:
    numbers: list[int] = []
    for part in re.split(r"\s*(?:,|;|and|&)\s*", group):
        bounds = [int(n) for n in re.findall(r"\d{1,3}", part)]
        if len(bounds) == 2 and ("-" in part or "–" in part):
            low, high = min(bounds), max(bounds)
            numbers.extend(range(low, min(high, low + 20) + 1))
        else:
            numbers.extend(bounds)
    return numbers


def _strip_cites(text: str) -> tuple[str, list[int]]:
    """The sentence without inline citation markers, and the numbers they named."""
    numbers: list[int] = []

    def take(m: re.Match[str]) -> str:
        numbers.extend(_cite_numbers(m.group(1)))
        return ""

    clean = _CITE.sub(take, text)
    clean = re.sub(r"\s+([.,;:!?])", r"\1", clean)
    clean = re.sub(r"([.,;:!?])\1+", r"\1", clean)
    return re.sub(r"\s{2,}", " ", clean).strip(), numbers


def _split_cited(text: str) -> list[tuple[str, list[int]]]:
    """Sentences with the citation numbers written in them. A marker placed after the full stop ("... free. [2]")
    belongs to the sentence before it."""
    units: list[tuple[str, list[int]]] = []
    for raw in split_sentences(text):
        lead = _LEADING_CITES.match(raw)
        if lead and units:
            _, numbers = _strip_cites(lead.group())
            units[-1][1].extend(numbers)
            raw = raw[lead.end() :]
        clean, numbers = _strip_cites(raw)
        if _WORDS.search(clean):
            units.append((clean, numbers))
        elif units:
            units[-1][1].extend(numbers)
    return units


def is_action_claim(sentence: str) -> bool:
    """True for a sentence saying the assistant changed something ("I've added it to your cart")."""
    match = _ACTION_CLAIM.search(sentence)
    return match is not None and not _CONDITIONAL.search(sentence[: match.start()])


def sentence_kind(sentence: str) -> Literal["claim", "meta"]:
    """The kind of a model sentence: "meta" when it only says the shop has no record (or is another fixed phrase
    about the answer), "claim" otherwise, including a refusal-shaped sentence that goes on to state something."""
    if classify(sentence) != "claim" and not _SECOND_CLAUSE.search(sentence.rstrip(".!?")):
        return "meta"
    return "claim"


def build_draft(
    reply: Reply,
    task: Task,
    *,
    scorer: FaithfulnessScorer | None = None,
    notes: Sequence[str] = (),
) -> Draft:
    """The Draft for a parsed reply: one Sentence per sentence, with the evidence numbers it cites.

    Cites are the inline markers in the sentence, else the reply's citation list, else (with a scorer) the
    evidence passage that supports the sentence best. Numbers that name no evidence are dropped. Sentences that
    claim an action was done, repeat themselves or decline to help are dropped. A reply left with nothing, or with
    only a bare "Yes." that no evidence can check, raises GeneratorUnavailable.
    """
    valid = {ev.number for ev in task.evidence}
    global_cites = tuple(n for n in reply.citations if n in valid)
    allowed_urls = {
        url.split("#")[0].rstrip("/")
        for ev in task.evidence
        for url in (ev.passage.url, getattr(task.documents.get(ev.passage.doc_id), "url", ""))
        if url
    }
    # Tags are no part of a plain answer: echoed fence tags, the prompt's "<the answer ...>" placeholder, HTML.
    answer = _HTML_TAG.sub(" ", reply.answer)
    units = _split_cited(answer)
    markdowns: list[str | None] = [None] * len(units)
    if reply.markdown and reply.markdown.strip() != reply.answer.strip():
        md_units = _split_cited(_ECHO_TAG.sub(" ", reply.markdown))
        if len(md_units) == len(units):
            markdowns = [md for md, _ in md_units]

    if units and all(_MODEL_REFUSAL.search(text) for text, _ in units):
        raise GeneratorUnavailable("the model declined to answer")

    dropped: list[str] = []
    sentences: list[Sentence] = []
    seen: set[str] = set()
    for (raw_text, inline), md in zip(units, markdowns, strict=True):
        raw_text = _LEAD_PUNCT.sub("", _LABEL.sub("", raw_text))
        text = markdown_plain(raw_text)
        markdown: str | None = None
        if md is not None:
            md_plain = markdown_plain(md)
            # The buyer sees the markdown, the guard checks the text: they must say the same thing.
            if content_words(md_plain) <= content_words(text) and hard_tokens(md_plain) <= hard_tokens(text):
                markdown = _safe_markdown(md, allowed_urls)
        elif text != raw_text:
            markdown = _safe_markdown(raw_text, allowed_urls)
        if markdown == text:
            markdown = None
        key = " ".join(text.casefold().split())
        if not _WORDS.search(text) or key in seen:
            continue
        seen.add(key)
        if _MODEL_REFUSAL.search(text) or is_action_claim(text):
            dropped.append(text)
            continue
        cites = tuple(dict.fromkeys(n for n in inline if n in valid)) or global_cites
        sentence_type = sentence_kind(text)
        if not cites and sentence_type == "claim" and scorer is not None and task.evidence:
            support = scorer.support(text, [ev.passage.text for ev in task.evidence])
            if support.supported and support.evidence_index is not None:
                cites = (task.evidence[support.evidence_index].number,)
        sentences.append(Sentence(text=text, cites=cites, markdown=markdown, kind=sentence_type))

    if not sentences or not any(len(_WORDS.findall(s.text)) >= 2 for s in sentences):
        raise GeneratorUnavailable("the model's reply holds no usable sentence")

    doc_of = {ev.number: ev.passage.doc_id for ev in task.evidence}
    claims = [s for s in sentences if s.kind == "claim"]
    cited = [doc_of[n] for s in sentences for n in s.cites if n in doc_of]
    if cited:
        used = tuple(dict.fromkeys(cited))
    elif claims:
        used = tuple(dict.fromkeys(ev.passage.doc_id for ev in task.evidence))
    else:
        used = tuple(d for d in task.resolution.doc_ids if d in task.documents)
    abstains = not claims and any(classify(s.text) == "refusal" for s in sentences)
    kind: DraftKind = "not_recorded" if abstains else "answer"
    all_notes = [*notes, *(f"dropped: {text}" for text in dropped)]
    return Draft(sentences=tuple(sentences), kind=kind, generator="openai", used_doc_ids=used, notes=tuple(all_notes))
