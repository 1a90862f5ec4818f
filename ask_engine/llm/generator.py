"""The OpenAI-compatible LLM generator: prompt templates, one chat completion, the reply parsed into a cited Draft.

Works with any server speaking the OpenAI chat-completions API (llama.cpp, vLLM, Ollama, hosted APIs). Every
failure (no URL configured, connection refused, timeout, HTTP error, unparseable output, a refusal) raises
`GeneratorUnavailable`, and the engine answers extractively instead. One request waits at most `llm_deadline_s` for
the model (`GeneratorDeadline`), and after repeated failures a circuit breaker skips the model for a cool-down
(`GeneratorBypassed`), so a hanging server costs each buyer at most the deadline, and soon nothing at all. The
grounding guard, not the model, decides which sentences reach the buyer; this module only makes the draft easy to
check: one sentence per claim, each with the evidence numbers it cites.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import jinja2

from ask_engine.breaker import CircuitBreaker
from ask_engine.config import Settings
from ask_engine.errors import GeneratorBypassed, GeneratorDeadline, GeneratorUnavailable
from ask_engine.guard import sanitize_text
from ask_engine.guard.faithfulness import classify, content_words, hard_tokens, split_sentences
from ask_engine.types import Draft, DraftKind, Evidence, Sentence, Task

if TYPE_CHECKING:
    from ask_engine.guard.faithfulness import FaithfulnessScorer
    from ask_engine.protocols import Embedder

PROMPTS_DIR = Path(__file__).parent / "prompts"
HISTORY_TURNS = 3  # earlier turns shown to the model; older ones rarely matter and cost context
HISTORY_CHARS = 400  # per question or answer of an earlier turn
MIN_PASSAGE_CHARS = 120  # a passage cut shorter than this says too little to be worth its number
CONNECT_TIMEOUT_S = 5.0
MIN_ATTEMPT_S = 0.05  # less budget than this left: not worth another attempt

ANSWER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "answer": {"type": "string"},
        "citations": {"type": "array", "items": {"type": "integer"}},
        "markdown": {"type": "string"},
    },
    "required": ["answer", "citations"],
}

# response_format variants, most specific first. A server that rejects one is asked again with the next, and the
# variant that worked is remembered per base URL. llama.cpp (both servers) reads the "schema" key of json_object
# and constrains decoding with it; vLLM, Ollama and hosted APIs take json_schema or json_object.
_FORMATS: tuple[tuple[str, dict[str, Any] | None], ...] = (
    ("json_object+schema", {"type": "json_object", "schema": ANSWER_SCHEMA}),
    ("json_schema", {"type": "json_schema", "json_schema": {"name": "shop_answer", "schema": ANSWER_SCHEMA}}),
    ("json_object", {"type": "json_object"}),
    ("text", None),
)
_FORMAT_LEVEL: dict[str, int] = {}
_FORMAT_LOCK = threading.Lock()
# Words in an error body that show the server objected to response_format rather than to the request as a whole.
_FORMAT_COMPLAINT = re.compile(r"response_format|json|schema|grammar", re.IGNORECASE)


# --------------------------------------------------------------------------------------------------- prompts

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


# --------------------------------------------------------------------------------------------------- parsing

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


# --------------------------------------------------------------------------------------------------- generator


class OpenAICompatibleGenerator:
    """Answers from the evidence with a model behind an OpenAI-compatible chat-completions endpoint."""

    name = "openai"

    def __init__(
        self, settings: Settings | None = None, *, embedder: Embedder | None = None, client: Any | None = None
    ) -> None:
        self.settings = settings or Settings.load()
        self.embedder = embedder
        self._client = client
        self._scorer: FaithfulnessScorer | None = None
        self._lock = threading.Lock()
        self.breaker = CircuitBreaker(
            self.settings.llm_breaker_failures,
            self.settings.llm_breaker_window_s,
            self.settings.llm_breaker_cooldown_s,
            name="the LLM server",
        )

    def status(self) -> dict[str, Any]:
        """The model's state for an operator (/healthz): up, breaker_open or probing, with failure counts."""
        return self.breaker.snapshot()

    # -- backends ---------------------------------------------------------------------------------------------

    @property
    def base_url(self) -> str | None:
        url = (self.settings.llm_base_url or "").strip()
        return url.rstrip("/") or None

    def _openai(self) -> Any:
        if self._client is None:
            base_url = self.base_url
            if base_url is None:
                raise GeneratorUnavailable("no LLM base URL configured (ASK_ENGINE_LLM_BASE_URL)")
            from openai import OpenAI, Timeout

            timeout = self.settings.llm_timeout_s
            with self._lock:
                if self._client is None:
                    self._client = OpenAI(
                        base_url=base_url,
                        api_key=self.settings.llm_api_key or "not-needed",
                        timeout=Timeout(timeout, connect=min(timeout, CONNECT_TIMEOUT_S)),
                        # One attempt: the buyer waits, and the extractive answer is ready as the fallback.
                        max_retries=0,
                    )
        return self._client

    def _faithfulness(self) -> FaithfulnessScorer:
        if self._scorer is None:
            from ask_engine.guard.faithfulness import FaithfulnessScorer

            self._scorer = FaithfulnessScorer(self.embedder)
        return self._scorer

    # -- the call ---------------------------------------------------------------------------------------------

    def _format_key(self) -> str:
        return self.base_url or f"client:{id(self._client)}"

    def _complete(self, prompt: Prompt, deadline: float) -> tuple[str | None, str | None, str]:
        """(content, finish_reason, format used) of one chat completion; GeneratorUnavailable on any failure.

        Transport failures (timeouts, connection errors, HTTP errors) count against the circuit breaker; a reply
        that came back, however useless, counts as the server being up."""
        try:
            result = self._call(prompt, deadline)
        except _Transport as exc:
            self.breaker.failure()
            raise exc.error from exc.__cause__
        except GeneratorUnavailable:  # a reply came back (no choices, a refusal): the server is up
            self.breaker.success()
            raise
        self.breaker.success()
        return result

    def _call(self, prompt: Prompt, deadline: float) -> tuple[str | None, str | None, str]:
        import openai

        client = self._openai()
        key = self._format_key()
        with _FORMAT_LOCK:
            level = _FORMAT_LEVEL.get(key, 0) if self.settings.llm_json_mode else len(_FORMATS) - 1
        first = level
        while True:
            label, response_format = _FORMATS[level]
            kwargs: dict[str, Any] = {
                "model": self.settings.llm_model,
                "messages": prompt.messages(),
                "temperature": self.settings.llm_temperature,
                "max_tokens": self.settings.llm_max_tokens,
            }
            if response_format is not None:
                kwargs["response_format"] = response_format
            # Each attempt (a format retry too) gets what is left of the request's budget, at most llm_timeout_s.
            remaining = deadline - time.monotonic()
            if remaining < MIN_ATTEMPT_S:
                raise _Transport(self._deadline_error())
            attempt_s = min(self.settings.llm_timeout_s, remaining)
            kwargs["timeout"] = openai.Timeout(attempt_s, connect=min(attempt_s, CONNECT_TIMEOUT_S))
            try:
                response = client.chat.completions.create(**kwargs)
            except openai.APIStatusError as exc:
                if response_format is not None and _rejects_format(exc) and level + 1 < len(_FORMATS):
                    level += 1
                    continue
                raise _Transport(GeneratorUnavailable(f"the LLM server answered HTTP {exc.status_code}")) from exc
            except openai.APITimeoutError as exc:
                if deadline - time.monotonic() < MIN_ATTEMPT_S:  # the budget ran out, not llm_timeout_s
                    raise _Transport(self._deadline_error()) from exc
                raise _Transport(GeneratorUnavailable("the LLM server timed out")) from exc
            except openai.APIConnectionError as exc:
                raise _Transport(GeneratorUnavailable(f"cannot reach the LLM server: {exc.__cause__ or exc}")) from exc
            except Exception as exc:  # a broken body, a client bug: still only "no model answer this time"
                error = GeneratorUnavailable(f"the LLM call failed: {type(exc).__name__}: {exc}")
                raise _Transport(error) from exc
            if level != first:
                with _FORMAT_LOCK:
                    _FORMAT_LEVEL[key] = max(level, _FORMAT_LEVEL.get(key, 0))
            try:
                choice = response.choices[0]
                message = choice.message
                refusal = getattr(message, "refusal", None)
                content = message.content
                finish = choice.finish_reason
            except (AttributeError, IndexError, TypeError) as exc:
                raise GeneratorUnavailable("the LLM server returned no choices") from exc
            if refusal or finish == "content_filter":
                raise GeneratorUnavailable("the model declined to answer")
            return content if isinstance(content, str) else None, finish, label

    def _deadline_error(self) -> GeneratorDeadline:
        return GeneratorDeadline(
            f"the LLM server did not answer within the {self.settings.llm_deadline_s:g} s deadline"
        )

    def generate(self, task: Task) -> Draft:
        """A draft answer to `task` from the model; raises GeneratorUnavailable whenever there is none."""
        if self.base_url is None and self._client is None:
            raise GeneratorUnavailable("no LLM base URL configured (ASK_ENGINE_LLM_BASE_URL)")
        if not task.query.strip():
            # Nothing to answer: a model would only invent a question. The extractive path asks for one.
            raise GeneratorUnavailable("no question to answer")
        deadline = time.monotonic() + self.settings.llm_deadline_s
        if not self.breaker.allow():
            raise GeneratorBypassed("the LLM circuit breaker is open after repeated failures")
        prompt = build_prompt(
            task,
            max_sentences=self.settings.max_answer_sentences,
            max_prompt_chars=self.settings.llm_max_prompt_chars,
        )
        start = time.perf_counter()
        content, finish, label = self._complete(prompt, deadline)
        elapsed_ms = (time.perf_counter() - start) * 1000.0
        reply = parse_reply(content, truncated=finish == "length")
        notes = (
            f"model={self.settings.llm_model}",
            f"response_format={label}",
            f"finish_reason={finish}",
            f"llm_ms={elapsed_ms:.0f}",
        )
        try:
            return build_draft(reply, task, scorer=self._faithfulness(), notes=notes)
        except GeneratorUnavailable:
            raise
        except Exception as exc:  # the scorer's embedder failing is no reason for a 5xx either
            raise GeneratorUnavailable(f"could not read the model's reply: {type(exc).__name__}: {exc}") from exc


class _Transport(Exception):  # an internal carrier, never escapes this module
    """Carries the GeneratorUnavailable of a failed call to `_complete`, which counts it against the breaker."""

    def __init__(self, error: GeneratorUnavailable) -> None:
        super().__init__(str(error))
        self.error = error


def _rejects_format(exc: Any) -> bool:
    """True when an HTTP error looks like the server refusing our response_format (so a plainer one may work)."""
    status = getattr(exc, "status_code", 0)
    if status not in (400, 422, 500):
        return False
    body = getattr(exc, "body", None)
    text = f"{getattr(exc, 'message', '')} {json.dumps(body, default=str) if body is not None else ''}"
    return status == 422 or bool(_FORMAT_COMPLAINT.search(text))
