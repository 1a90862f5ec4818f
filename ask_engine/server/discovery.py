"""Discovery documents: the business profile at /.well-known/ucp, the OpenAPI document, a demo platform profile."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ask_engine.models import CAPABILITY, MAX_CONTEXT_BYTES, MAX_IDS, MAX_QUERY_CHARS, SERVICE

REST_PATH = "/api/ucp/v1"  # the REST service endpoint; the ask operation is POST <endpoint>/ask
UCP_MCP_PATH = "/ucp/mcp"
SHOP_MCP_PATH = "/mcp"
PROFILE_PATH = "/.well-known/ucp"
AGENT_CARD_PATH = "/.well-known/agent-card.json"  # the A2A agent card: the a2a transport's endpoint
DEMO_AGENT_PATH = "/.well-known/ucp-demo-agent.json"
DRAFT = "draft"
CACHE_CONTROL = "public, max-age=300"
IDEMPOTENCY_KEY = r"^[\x21-\x7e]{1,255}$"  # visible ASCII, as HTTP header values allow (the OpenAPI pattern too)


def _ucp_dev(version: str, path: str) -> str:
    return f"https://ucp.dev/{version}/{path}"


def capability_entry(version: str) -> dict[str, Any]:
    """The `dev.ucp.common.ask` entry of a profile, with its spec and schema URLs."""
    return {
        "version": version,
        "spec": _ucp_dev(version, "specification/common/ask"),
        "schema": _ucp_dev(version, "schemas/common/ask.json"),
    }


def business_profile(
    base_url: str,
    version: str,
    *,
    older_versions: Mapping[str, str] | None = None,
    keys: Sequence[Mapping[str, str]] = (),
) -> dict[str, Any]:
    """The business profile for one shop served at `base_url` (scheme://host[:port][/shops/<name>], no slash).

    `older_versions` maps other protocol versions this server also answers to the URL of their profile; `keys` are
    the public JWKs its responses are signed with (the profile's top-level `keys[]`, a JWK Set).
    """
    spec = _ucp_dev(version, "specification/overview")
    ucp: dict[str, Any] = {
        "version": version,
        "services": {
            SERVICE: [
                {
                    "version": version,
                    "spec": spec,
                    "transport": "rest",
                    "schema": _ucp_dev(version, "services/common/rest.openapi.json"),
                    "endpoint": base_url + REST_PATH,
                },
                {
                    "version": version,
                    "spec": spec,
                    "transport": "mcp",
                    "schema": _ucp_dev(version, "services/common/mcp.openrpc.json"),
                    "endpoint": base_url + UCP_MCP_PATH,
                },
                {"version": version, "spec": spec, "transport": "a2a", "endpoint": base_url + AGENT_CARD_PATH},
            ]
        },
        "capabilities": {CAPABILITY: [capability_entry(version)]},
        "payment_handlers": {},
    }
    _add_catalog(ucp, base_url, version)
    if older_versions:
        ucp["supported_versions"] = dict(older_versions)
    profile: dict[str, Any] = {"ucp": ucp}
    if keys:
        profile["keys"] = [dict(key) for key in keys]
    return profile


def _add_catalog(ucp: dict[str, Any], base_url: str, version: str) -> None:
    """The shopping service (the catalog over REST and UCP MCP), its two capabilities, and the project's answer
    extension of catalog search with the address of the JSON Schema this server ships."""
    from ask_engine.catalog.answer import ANSWER_EXTENSION, ANSWER_SCHEMA_PATH, ANSWER_VERSION
    from ask_engine.catalog.ucp import LOOKUP, SEARCH
    from ask_engine.catalog.ucp import SERVICE as SHOPPING

    spec = _ucp_dev(version, "specification/overview")
    ucp["services"][SHOPPING] = [
        {
            "version": version,
            "spec": spec,
            "transport": "rest",
            "schema": _ucp_dev(version, "services/shopping/rest.openapi.json"),
            "endpoint": base_url + REST_PATH,
        },
        {
            "version": version,
            "spec": spec,
            "transport": "mcp",
            "schema": _ucp_dev(version, "services/shopping/mcp.openrpc.json"),
            "endpoint": base_url + UCP_MCP_PATH,
        },
    ]
    for name, page, schema in ((SEARCH, "search", "catalog_search"), (LOOKUP, "lookup", "catalog_lookup")):
        ucp["capabilities"][name] = [
            {
                "version": version,
                "spec": _ucp_dev(version, f"specification/shopping/catalog/{page}"),
                "schema": _ucp_dev(version, f"schemas/shopping/{schema}.json"),
            }
        ]
    ucp["capabilities"][ANSWER_EXTENSION] = [
        {
            "version": ANSWER_VERSION,
            "extends": SEARCH,
            "schema": base_url + ANSWER_SCHEMA_PATH,
            "spec": base_url + ANSWER_SCHEMA_PATH,
        }
    ]


def demo_agent_profile(newest: str, versions: Sequence[str]) -> dict[str, Any]:
    """A platform profile at protocol version `newest` declaring `dev.ucp.common.ask` at `versions`.

    Served by the business itself so the demo curl negotiates without any network (loopback http is allowed).
    """
    return {
        "ucp": {
            "version": newest,
            "services": {
                SERVICE: [
                    {
                        "version": newest,
                        "spec": _ucp_dev(newest, "specification/overview"),
                        "transport": "rest",
                        "schema": _ucp_dev(newest, "services/common/rest.openapi.json"),
                    }
                ]
            },
            "capabilities": {
                CAPABILITY: [capability_entry(v) for v in dict.fromkeys([newest, *versions])],
                **_demo_catalog(newest),
            },
            "payment_handlers": {},
        }
    }


def _demo_catalog(version: str) -> dict[str, Any]:
    """The catalog capabilities and the answer extension, so the demo curl of catalog/search negotiates too."""
    from ask_engine.catalog.answer import ANSWER_EXTENSION, ANSWER_VERSION
    from ask_engine.catalog.ucp import LOOKUP, SEARCH

    def entry(page: str, schema: str) -> dict[str, Any]:
        return {
            "version": version,
            "spec": _ucp_dev(version, f"specification/shopping/catalog/{page}"),
            "schema": _ucp_dev(version, f"schemas/shopping/{schema}.json"),
        }

    answer = "urn:dev.ask-engine:schemas:shopping:answer"
    return {
        SEARCH: [entry("search", "catalog_search")],
        LOOKUP: [entry("lookup", "catalog_lookup")],
        ANSWER_EXTENSION: [{"version": ANSWER_VERSION, "extends": SEARCH, "spec": answer, "schema": answer}],
    }


# --- OpenAPI ----------------------------------------------------------------------------------------


def _error_response_schema() -> dict[str, Any]:
    message = {
        "type": "object",
        "required": ["type", "code", "content", "severity"],
        "properties": {
            "type": {"const": "error"},
            "code": {"type": "string", "examples": ["invalid_input", "unauthorized", "rate_limited"]},
            "path": {"type": "string", "description": "RFC 9535 JSONPath into the request body"},
            "content": {"type": "string"},
            "content_type": {"enum": ["plain", "markdown"]},
            "severity": {"enum": ["recoverable", "requires_buyer_input", "requires_buyer_review", "unrecoverable"]},
        },
    }
    return {
        "type": "object",
        "description": "The UCP error_response (schemas/common/types/error_response.json).",
        "required": ["ucp", "messages"],
        "additionalProperties": False,
        "properties": {
            "ucp": {
                "type": "object",
                "required": ["version", "status"],
                "properties": {
                    "version": {"type": "string", "pattern": r"^\d{4}-\d{2}-\d{2}$"},
                    "status": {"const": "error"},
                    "capabilities": {"type": "object"},
                },
            },
            "messages": {"type": "array", "minItems": 1, "items": message},
            "continue_url": {"type": "string", "format": "uri"},
        },
    }


def _ask_request_schema() -> dict[str, Any]:
    return {
        "type": "object",
        "description": "The ask object (schemas/common/ask.json#/$defs/ask_request). Unknown fields are ignored.",
        "required": ["query"],
        "properties": {
            "query": {"type": "string", "maxLength": MAX_QUERY_CHARS, "description": "Natural-language question."},
            "ids": {
                "type": "array",
                "maxItems": MAX_IDS,
                "items": {"type": "string"},
                "description": "GIDs, variant GIDs, SKUs, handles or product URLs the question is about.",
            },
            "conversation": {
                "type": "object",
                "required": ["id"],
                "properties": {"id": {"type": "string"}, "expires_at": {"type": "string", "format": "date-time"}},
            },
            "context": {
                "type": "object",
                "description": f"Provisional buyer context; serialized at most {MAX_CONTEXT_BYTES} bytes.",
            },
            "signals": {"type": "object", "description": "Platform signals; keys are reverse-domain names."},
        },
    }


def _ask_response_schema() -> dict[str, Any]:
    return {
        "type": "object",
        "description": "The ask response (schemas/common/ask.json#/$defs/ask_response).",
        "required": ["ucp", "answer"],
        "properties": {
            "ucp": {
                "type": "object",
                "required": ["version", "capabilities"],
                "properties": {"version": {"type": "string"}, "capabilities": {"type": "object"}},
            },
            "answer": {
                "type": "object",
                "required": ["plain"],
                "properties": {
                    "plain": {"type": "string"},
                    "markdown": {"type": "string"},
                    "html": {"type": "string"},
                },
            },
            "conversation": {
                "type": "object",
                "required": ["id"],
                "properties": {"id": {"type": "string"}, "expires_at": {"type": "string", "format": "date-time"}},
            },
            "links": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["type", "url"],
                    "properties": {
                        "type": {"type": "string"},
                        "url": {"type": "string", "format": "uri"},
                        "title": {"type": "string"},
                        "id": {"type": "string"},
                    },
                },
            },
            "messages": {"type": "array", "items": {"type": "object"}},
        },
    }


def openapi_document(base_url: str, version: str) -> dict[str, Any]:
    """An OpenAPI 3.1 description of the REST binding served at `base_url`."""

    def error(description: str, *, retry_after: bool = False, authenticate: bool = False) -> dict[str, Any]:
        headers: dict[str, Any] = {"Request-Id": {"$ref": "#/components/headers/RequestId"}}
        if retry_after:
            headers["Retry-After"] = {
                "description": "Seconds to wait before retrying.",
                "schema": {"type": "integer", "minimum": 0},
            }
        if authenticate:
            headers["WWW-Authenticate"] = {"description": 'Bearer realm="ucp"', "schema": {"type": "string"}}
        return {
            "description": description,
            "headers": headers,
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorResponse"}}},
        }

    return {
        "openapi": "3.1.0",
        "info": {
            "title": "UCP Common service: ask (dev.ucp.common.ask)",
            "version": version,
            "description": "Ask the business about its products, policies and services. Read-only: asking never "
            "changes a cart, order or account.",
        },
        "servers": [{"url": base_url + REST_PATH}],
        "paths": {
            "/ask": {
                "post": {
                    "operationId": "ask_business",
                    "summary": "Ask the business a question",
                    "parameters": [
                        {
                            "name": "UCP-Agent",
                            "in": "header",
                            "required": True,
                            "description": 'The platform profile, RFC 8941 dictionary: profile="https://..."',
                            "schema": {"type": "string", "minLength": 1},
                        },
                        {
                            "name": "Request-Id",
                            "in": "header",
                            "required": False,
                            "description": "Echoed on the response when it is 1 to 200 visible ASCII characters; "
                            "any other value, or none, is replaced by a generated id (never refused).",
                            "schema": {"type": "string"},
                        },
                        {
                            "name": "Idempotency-Key",
                            "in": "header",
                            "required": False,
                            "description": "A retry with the same key and body returns the stored response and "
                            "appends no conversation turn; the same key with another body is a 409.",
                            "schema": {"type": "string", "minLength": 1, "maxLength": 255, "pattern": IDEMPOTENCY_KEY},
                        },
                        {
                            "name": "X-API-Key",
                            "in": "header",
                            "required": False,
                            "description": "Agent key (alternative to Authorization: Bearer).",
                            "schema": {"type": "string"},
                        },
                    ],
                    "security": [{"bearer": []}, {"apiKey": []}, {}],
                    "requestBody": {
                        "required": True,
                        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/AskRequest"}}},
                    },
                    "responses": {
                        "200": {
                            "description": "An answer, or an error_response when no capability is in common "
                            "(capabilities_incompatible).",
                            "headers": {"Request-Id": {"$ref": "#/components/headers/RequestId"}},
                            "content": {
                                "application/json": {
                                    "schema": {
                                        "oneOf": [
                                            {"$ref": "#/components/schemas/AskResponse"},
                                            {"$ref": "#/components/schemas/ErrorResponse"},
                                        ]
                                    }
                                }
                            },
                        },
                        "400": error("Malformed JSON, invalid_input, or invalid_profile_url."),
                        "401": error("No or unknown agent key.", authenticate=True),
                        "409": error("Idempotency key reused with a different body."),
                        "422": error("profile_malformed or version_unsupported."),
                        "424": error("profile_unreachable: the platform profile could not be fetched."),
                        "429": error(
                            "Rate limited: per agent key, or per client address when auth is off.", retry_after=True
                        ),
                        "500": error("Unexpected error (no internals are disclosed)."),
                        "503": error("Conversation/idempotency store unavailable or overloaded.", retry_after=True),
                    },
                }
            }
        },
        "components": {
            "schemas": {
                "AskRequest": _ask_request_schema(),
                "AskResponse": _ask_response_schema(),
                "ErrorResponse": _error_response_schema(),
            },
            "headers": {"RequestId": {"description": "The request's id.", "schema": {"type": "string"}}},
            "securitySchemes": {
                "bearer": {"type": "http", "scheme": "bearer"},
                "apiKey": {"type": "apiKey", "in": "header", "name": "X-API-Key"},
            },
        },
    }
