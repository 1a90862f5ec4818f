"""MCP bindings of `ask_business`: the UCP tool ({meta, ask}) and the shop's own tool (the ask fields), served over
streamable HTTP (stateless, JSON responses, with the HTTP status of each transport error) or over stdio."""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from contextlib import AbstractAsyncContextManager
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from ask_engine.config import Settings
from ask_engine.models import MAX_CONVERSATION_ID_CHARS, MAX_ID_CHARS, MAX_IDS, MAX_QUERY_CHARS
from ask_engine.server.app import LOCAL_CALLER, Caller, ProtocolError, ShopService, internal_error, invalid_input

if TYPE_CHECKING:
    import mcp_types
    from mcp.server.context import ServerRequestContext
    from mcp.server.lowlevel.server import Server
    from starlette.types import Message, Receive, Scope, Send

logger = logging.getLogger("ask_engine.server")

TOOL_NAME = "ask_business"
# Scope key through which a tool handler tells the HTTP layer which status (and headers) its JSON-RPC error takes:
# over streamable HTTP the status is the primary signal (UCP overview, "Error Handling").
_HTTP_ERROR = "ask_engine.mcp_http_error"
_ENVELOPE_BYTES = 16 * 1024  # room for the JSON-RPC envelope and meta around the ask object
_LOOPBACK = ("127.0.0.1", "localhost", "::1")

_TOOL_DESCRIPTION = (
    "Ask the business about its products, policies and services: fit, materials, care, compatibility, shipping, "
    "returns, payment, store FAQ. Pass product GIDs, SKUs, handles or product URLs in `ids` when the question is "
    "about specific items; replay `conversation` from the previous answer for follow-ups. Read-only: it never "
    "changes a cart, order or account. Answers are indicative, not binding."
)


# --- schemas -----------------------------------------------------------------------------------------


def _inline(node: Any, resolver: Any, depth: int = 0) -> Any:
    """Replace every $ref by what it points to, so the schema stands alone (MCP hosts resolve nothing)."""
    if depth > 32:
        raise ValueError("schema nests too deeply to inline")
    if isinstance(node, list):
        return [_inline(item, resolver, depth + 1) for item in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        resolved = resolver.lookup(node["$ref"])
        target = _inline(resolved.contents, resolved.resolver, depth + 1)
        siblings = {k: _inline(v, resolver, depth + 1) for k, v in node.items() if k != "$ref"}
        return {**target, **siblings}
    return {k: _inline(v, resolver, depth + 1) for k, v in node.items() if k not in ("$id", "$schema", "$defs")}


@lru_cache(maxsize=1)
def ask_input_schema() -> dict[str, Any]:
    """ask.json's ask_request, inlined, with this server's limits."""
    from ask_engine.models import _registry

    resolver = _registry().resolver()
    resolved = resolver.lookup("https://ucp.dev/schemas/common/ask.json#/$defs/ask_request")
    schema: dict[str, Any] = _inline(resolved.contents, resolved.resolver)
    props = schema["properties"]
    props["query"]["maxLength"] = MAX_QUERY_CHARS
    props["ids"]["maxItems"] = MAX_IDS
    props["ids"]["items"]["maxLength"] = MAX_ID_CHARS
    props["conversation"]["properties"]["id"]["maxLength"] = MAX_CONVERSATION_ID_CHARS
    return schema


def _meta_schema() -> dict[str, Any]:
    return {
        "type": "object",
        "description": "UCP request metadata (maps to the HTTP headers of the REST binding).",
        "required": ["ucp-agent"],
        "properties": {
            "ucp-agent": {
                "type": "object",
                "required": ["profile"],
                "properties": {
                    "profile": {"type": "string", "format": "uri", "description": "URL of the platform's UCP profile."}
                },
            },
            "idempotency-key": {
                "type": "string",
                "maxLength": 255,
                "description": "A retry with the same key and ask returns the stored answer and appends no turn.",
            },
        },
    }


def _output_schema() -> dict[str, Any]:
    # Loose on purpose: it must admit both the ask response and the error_response (capabilities_incompatible).
    return {
        "type": "object",
        "required": ["ucp"],
        "properties": {
            "ucp": {"type": "object", "required": ["version"]},
            "answer": {"type": "object", "required": ["plain"], "properties": {"plain": {"type": "string"}}},
            "conversation": {"type": "object", "required": ["id"]},
            "links": {"type": "array", "items": {"type": "object"}},
            "messages": {"type": "array", "items": {"type": "object"}},
            "continue_url": {"type": "string"},
        },
    }


def _tool(input_schema: dict[str, Any]) -> mcp_types.Tool:
    import mcp_types as types

    return types.Tool(
        name=TOOL_NAME,
        title="Ask the business",
        description=_TOOL_DESCRIPTION,
        input_schema=input_schema,
        output_schema=_output_schema(),
        annotations=types.ToolAnnotations(
            title="Ask the business", read_only_hint=True, destructive_hint=False, open_world_hint=False
        ),
    )


def ucp_tool() -> mcp_types.Tool:
    """`ask_business` of the UCP binding: {meta: {"ucp-agent": {profile}, "idempotency-key"?}, ask: {...}}."""
    schema = {
        "type": "object",
        "required": ["meta", "ask"],
        "properties": {"meta": _meta_schema(), "ask": ask_input_schema()},
    }
    return _tool(schema)


def shop_tool() -> mcp_types.Tool:
    """`ask_business` of the shop's own MCP: the ask fields as arguments."""
    return _tool(ask_input_schema())


# --- handlers ----------------------------------------------------------------------------------------


def _result(body: dict[str, Any]) -> mcp_types.CallToolResult:
    import mcp_types as types

    text = json.dumps(body, ensure_ascii=False, separators=(",", ":"))
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], structured_content=body)


def _mark_http(request: Any, err: ProtocolError) -> None:
    """Make the HTTP response of this JSON-RPC error carry the binding's status and headers (none on stdio)."""
    scope = getattr(request, "scope", None)
    if isinstance(scope, dict):
        scope[_HTTP_ERROR] = (err.http_status, err.http_headers())


def _caller(service: ShopService, request: Any, *, local: bool) -> Caller:
    if local or request is None:
        # stdio: a local desktop host started us; there are no HTTP headers to authenticate.
        return LOCAL_CALLER
    client = getattr(request, "client", None)
    return service.authenticate(request.headers, getattr(client, "host", None))


def _profile_url(meta: Any) -> str | None:
    if meta is None:
        return None
    agent = meta.get("ucp-agent") if isinstance(meta, Mapping) else None
    profile = agent.get("profile") if isinstance(agent, Mapping) else None
    if profile is None:
        return None
    if not isinstance(profile, str):
        raise ProtocolError("invalid_profile_url", 'meta["ucp-agent"].profile must be a URL string.')
    return profile


def _unknown_tool(name: str) -> Exception:
    from mcp.shared.exceptions import MCPError

    return MCPError(-32602, f"Unknown tool: {name}. This server has one tool, {TOOL_NAME}.")


def _as_mcp_error(request: Any, err: ProtocolError) -> Exception:
    from mcp.shared.exceptions import MCPError

    _mark_http(request, err)
    return MCPError(err.jsonrpc_code or -32603, err.jsonrpc_message, err.jsonrpc_data())


def _server(name: str, instructions: str, tool: mcp_types.Tool, call: Any) -> Server:
    # The low-level server: arguments reach our handler unvalidated, so every bad input gets the protocol's
    # invalid_input error (-32602 with messages) rather than the SDK's own validation result.
    import mcp_types as types
    from mcp.server.lowlevel.server import Server

    from ask_engine import __version__

    async def list_tools(ctx: ServerRequestContext, params: Any) -> mcp_types.ListToolsResult:
        return types.ListToolsResult(tools=[tool])

    return Server(name, version=__version__, instructions=instructions, on_list_tools=list_tools, on_call_tool=call)


def build_ucp_server(service: ShopService) -> Server:
    """The UCP MCP server: negotiation from meta["ucp-agent"].profile, idempotency from meta["idempotency-key"]."""
    from ask_engine.conversations import payload_hash
    from ask_engine.server.negotiation import NegotiationError

    tool = ucp_tool()

    async def call_tool(ctx: ServerRequestContext, params: mcp_types.CallToolRequestParams) -> mcp_types.CallToolResult:
        if params.name != TOOL_NAME:
            raise _unknown_tool(params.name)
        request = ctx.request
        args = params.arguments or {}
        version = service.settings.ucp_version
        try:
            try:
                caller = _caller(service, request, local=False)
                service.check_rate(caller)
                meta = args.get("meta")
                version = await service.negotiate(_profile_url(meta))
                ask = args.get("ask")
                if ask is None:
                    raise invalid_input("$", 'The `ask` argument is required, e.g. {"ask": {"query": "..."}}.')
                ask_request = service.parse(ask)
                raw_key = meta.get("idempotency-key") if isinstance(meta, Mapping) else None
                key = service.check_idempotency_key(raw_key, 'meta["idempotency-key"]')
                body = await service.answer(
                    ask_request,
                    caller=caller,
                    version=version,
                    idempotency=(key, payload_hash(ask)) if key else None,
                )
            except NegotiationError as exc:
                raise service.negotiation_error(exc) from None
        except ProtocolError as err:
            if err.is_result:
                return _result(err.body(version))
            raise _as_mcp_error(request, err) from None
        except Exception:
            logger.exception("UCP MCP ask_business failed unexpectedly in shop %s", service.name)
            raise _as_mcp_error(request, internal_error()) from None
        return _result(body)

    instructions = (
        f"UCP business endpoint of {service.name}: call {TOOL_NAME} with meta['ucp-agent'].profile and an ask object."
    )
    return _server(f"{service.name} (UCP)", instructions, tool, call_tool)


def build_shop_server(service: ShopService, *, local: bool = False) -> Server:
    """The shop's own MCP server for plain MCP hosts: no meta, no negotiation; `local` = trusted stdio client."""
    tool = shop_tool()

    async def call_tool(ctx: ServerRequestContext, params: mcp_types.CallToolRequestParams) -> mcp_types.CallToolResult:
        if params.name != TOOL_NAME:
            raise _unknown_tool(params.name)
        request = ctx.request
        try:
            caller = _caller(service, request, local=local)
            service.check_rate(caller)
            ask_request = service.parse(params.arguments or {})
            body = await service.answer(ask_request, caller=caller, version=service.settings.ucp_version)
        except ProtocolError as err:
            if err.is_result:
                return _result(err.body(service.settings.ucp_version))
            raise _as_mcp_error(request, err) from None
        except Exception:
            logger.exception("shop MCP ask_business failed unexpectedly in shop %s", service.name)
            raise _as_mcp_error(request, internal_error()) from None
        return _result(body)

    shop = getattr(service.engine, "shop", None)
    title = getattr(shop, "name", None) or service.name
    instructions = f"Ask {title} about its products, policies and services with the {TOOL_NAME} tool."
    return _server(title, instructions, tool, call_tool)


# --- streamable HTTP ---------------------------------------------------------------------------------


def _security(settings: Settings) -> Any:
    from mcp.server.transport_security import TransportSecuritySettings

    if settings.host not in _LOOPBACK or settings.public_base_url:
        return None
    # Served on loopback only: refuse other Host/Origin headers (DNS rebinding), as the MCP SDK does by default.
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*", "127.0.0.1", "localhost", "[::1]"],
        allowed_origins=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"],
    )


class McpEndpoint:
    """One MCP server as an ASGI app: the SDK's stateless streamable-HTTP transport with JSON responses."""

    def __init__(self, server: Server, settings: Settings) -> None:
        from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

        self.server = server
        self.manager = StreamableHTTPSessionManager(
            app=server,
            json_response=True,
            stateless=True,
            security_settings=_security(settings),
            max_request_body_size=settings.max_body_bytes + _ENVELOPE_BYTES,
        )

    def run(self) -> AbstractAsyncContextManager[None]:
        """The session manager's lifetime; entered by the app's lifespan."""
        return self.manager.run()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def send_with_status(message: Message) -> None:
            marked = scope.get(_HTTP_ERROR)
            if message["type"] == "http.response.start" and marked:
                status, headers = marked
                extra = [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in headers.items()]
                message = {**message, "status": status, "headers": [*message.get("headers", []), *extra]}
            await send(message)

        await self.manager.handle_request(scope, receive, send_with_status)


# --- stdio -------------------------------------------------------------------------------------------


async def serve_stdio(service: ShopService) -> None:
    """Serve the shop MCP tool over stdin/stdout until the host closes it."""
    from mcp.server.stdio import stdio_server

    server = build_shop_server(service, local=True)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())
