"""Wire models (pydantic) mirroring the UCP `ask.json` schema, and the schema validator."""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ask_engine.errors import InvalidInput, InvalidInputItem

CAPABILITY = "dev.ucp.common.ask"
SERVICE = "dev.ucp.common"
MAX_QUERY_CHARS = 10_000
MAX_IDS = 10
MAX_CONTEXT_BYTES = 8_192
MAX_ID_CHARS = 2_048
MAX_CONVERSATION_ID_CHARS = 256

_REVERSE_DOMAIN = r"^[a-z](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9_-]*[a-z0-9_])?)+$"


class _Open(BaseModel):
    """Open objects: unknown fields are kept (the schema is open) but never required."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)


class Conversation(_Open):
    id: str = Field(max_length=MAX_CONVERSATION_ID_CHARS)
    expires_at: str | None = None


class Context(_Open):
    address_country: str | None = None
    address_region: str | None = None
    postal_code: str | None = None
    location: str | None = None
    language: str | None = None
    currency: str | None = None
    intent: str | None = None
    eligibility: list[str] | None = None
    payment: list[dict[str, Any]] | None = None


class AskRequest(_Open):
    query: str = Field(max_length=MAX_QUERY_CHARS)
    conversation: Conversation | None = None
    ids: list[str] | None = Field(default=None, max_length=MAX_IDS)
    context: Context | None = None
    signals: dict[str, Any] | None = None

    @field_validator("ids")
    @classmethod
    def _id_lengths(cls, v: list[str] | None) -> list[str] | None:
        for i in v or []:
            if len(i) > MAX_ID_CHARS:
                raise ValueError(f"each id must be at most {MAX_ID_CHARS} characters")
        return v

    @field_validator("context")
    @classmethod
    def _context_size(cls, v: Context | None) -> Context | None:
        if v is not None:
            size = len(json.dumps(v.model_dump(exclude_none=True), separators=(",", ":"), ensure_ascii=False).encode())
            if size > MAX_CONTEXT_BYTES:
                raise ValueError(f"context must serialize to at most {MAX_CONTEXT_BYTES} bytes (got {size})")
        return v

    @field_validator("signals")
    @classmethod
    def _signal_keys(cls, v: dict[str, Any] | None) -> dict[str, Any] | None:
        import re

        for key in v or {}:
            if not re.match(_REVERSE_DOMAIN, key):
                raise ValueError(f"signal key {key!r} is not a reverse-domain name")
        return v

    @classmethod
    def parse(cls, data: Any) -> AskRequest:
        """Validate raw input; raise InvalidInput carrying one item per problem (with JSONPath)."""
        if isinstance(data, AskRequest):
            return data
        if not isinstance(data, dict):
            raise InvalidInput([InvalidInputItem("$", "The ask request must be a JSON object.")])
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            raise InvalidInput([_item(e) for e in exc.errors()]) from None


def _item(err: Any) -> InvalidInputItem:
    path = "$"
    for part in err.get("loc", ()):
        path += f"[{part}]" if isinstance(part, int) else f".{part}"
    msg = err.get("msg", "invalid value")
    if msg.startswith("Value error, "):
        msg = msg[len("Value error, ") :]
    return InvalidInputItem(path, f"{path}: {msg}")


class Answer(_Open):
    plain: str
    markdown: str | None = None
    html: str | None = None


class Link(_Open):
    type: str
    url: str
    title: str | None = None
    id: str | None = None


class Message(_Open):
    type: Literal["info", "warning", "error"]
    code: str | None = None
    content: str
    path: str | None = None
    content_type: Literal["plain", "markdown"] | None = None
    presentation: str | None = None
    severity: Literal["recoverable", "requires_buyer_input", "requires_buyer_review", "unrecoverable"] | None = None


class CapabilityVersion(_Open):
    version: str


class UcpEnvelope(_Open):
    version: str
    status: Literal["success", "error"] | None = None
    capabilities: dict[str, list[CapabilityVersion]] | None = None


class AskResponse(_Open):
    ucp: UcpEnvelope
    answer: Answer
    conversation: Conversation | None = None
    links: list[Link] | None = None
    messages: list[Message] | None = None

    def to_json(self) -> dict[str, Any]:
        """The wire form: no nulls, empty lists dropped."""
        data = self.model_dump(mode="json", exclude_none=True)
        for key in ("links", "messages"):
            if not data.get(key):
                data.pop(key, None)
        return data


def ucp_envelope(version: str, status: Literal["success", "error"] | None = None) -> UcpEnvelope:
    return UcpEnvelope(version=version, status=status, capabilities={CAPABILITY: [CapabilityVersion(version=version)]})


# --- JSON Schema validation against the vendored spec -------------------------------------------

_MISSING_STUBS = (
    "https://ucp.dev/schemas/common/types/request_constraints.json",
    "https://ucp.dev/schemas/payment_handler.json",
    "https://ucp.dev/schemas/transports/embedded_config.json",
)


@lru_cache(maxsize=1)
def _registry() -> Any:
    from referencing import Registry, Resource

    root = resources.files("ask_engine") / "schemas"
    registry: Any = Registry()
    stack = [root]
    while stack:
        node = stack.pop()
        for child in node.iterdir():
            if child.is_dir():
                stack.append(child)
            elif child.name.endswith(".json") and child.name != "mcp.openrpc.json":
                schema = json.loads(child.read_text("utf-8"))
                if child.name == "ucp.json":
                    # protocol.md: ask.json refers to response_ask_schema, which this ucp.json lacks;
                    # register response_catalog_schema under that name.
                    schema["$defs"].setdefault("response_ask_schema", schema["$defs"]["response_catalog_schema"])
                registry = registry.with_resource(schema["$id"], Resource.from_contents(schema))
    for uri in _MISSING_STUBS:
        registry = registry.with_resource(
            uri, Resource.from_contents({"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": uri})
        )
    return registry


def _validator(ref: str) -> Any:
    from jsonschema import Draft202012Validator

    return Draft202012Validator({"$ref": ref}, registry=_registry(), format_checker=Draft202012Validator.FORMAT_CHECKER)


@lru_cache(maxsize=8)
def schema_validator(name: str) -> Any:
    """A jsonschema validator for 'ask_request', 'ask_response', 'error_response' or 'profile'."""
    refs = {
        "ask_request": "https://ucp.dev/schemas/common/ask.json#/$defs/ask_request",
        "ask_response": "https://ucp.dev/schemas/common/ask.json#/$defs/ask_response",
        "error_response": "https://ucp.dev/schemas/common/types/error_response.json",
        "business_profile": "https://ucp.dev/schemas/profile.json",
    }
    return _validator(refs[name])


def schema_errors(name: str, instance: Any) -> list[str]:
    """Human-readable schema violations (empty when valid)."""
    return [
        f"{'/'.join(map(str, e.absolute_path)) or '$'}: {e.message}"
        for e in schema_validator(name).iter_errors(instance)
    ]
