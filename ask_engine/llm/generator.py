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
from typing import TYPE_CHECKING, Any

from ask_engine.breaker import CircuitBreaker
from ask_engine.config import Settings
from ask_engine.errors import GeneratorBypassed, GeneratorDeadline, GeneratorUnavailable
from ask_engine.types import Draft, Task

if TYPE_CHECKING:
    from ask_engine.guard.faithfulness import FaithfulnessScorer
    from ask_engine.protocols import Embedder
from ask_engine.llm.prompt import Prompt, build_prompt
from ask_engine.llm.reply import ANSWER_SCHEMA, build_draft, parse_reply

CONNECT_TIMEOUT_S = 5.0
MIN_ATTEMPT_S = 0.05  # less budget than this left: not worth another attempt

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
