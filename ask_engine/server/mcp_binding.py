"""MCP bindings of `ask_business`: the UCP tool ({meta, ask}) and the shop's own tool (the ask fields), served over
streamable HTTP (stateless, JSON responses, with the HTTP status of each transport error) or over stdio."""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from ask_engine.config import Settings
from ask_engine.errors import InvalidInput, InvalidInputItem
from ask_engine.models import MAX_CONVERSATION_ID_CHARS, MAX_ID_CHARS, MAX_IDS, MAX_QUERY_CHARS
from ask_engine.server.service import (
    Call,
    ProtocolError,
    Reply,
    ShopService,
    invalid_input,
    unpaired_surrogates,
)
from ask_engine.server.streams import read_capped, replaying

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


def _http_status(err: ProtocolError) -> tuple[int, dict[str, str]]:
    """The HTTP status and headers of a JSON-RPC error on streamable HTTP.

    A refused agent key is 403 without a challenge, not 401: in MCP a 401 means "authorize with OAuth" (the MCP
    authorization spec has every 401 point at protected-resource metadata), and hosts such as the MCP Inspector
    start an OAuth flow on any 401. Agent keys are pre-shared credentials this server does not issue; MCP
    authorization is optional, and this server does not offer it (docs/server.md, "MCP").
    """
    headers = err.http_headers()
    if err.code == "unauthorized":
        headers.pop("WWW-Authenticate", None)
        return 403, headers
    return err.http_status, headers


def _mark_http(request: Any, err: ProtocolError) -> None:
    """Make the HTTP response of this JSON-RPC error carry the binding's status and headers (none on stdio)."""
    scope = getattr(request, "scope", None)
    if isinstance(scope, dict):
        scope[_HTTP_ERROR] = _http_status(err)


def _headers(request: Any, *, local: bool = False) -> Any:
    """The HTTP headers to authenticate; None for the trusted local client (stdio: a desktop host started us)."""
    return None if local or request is None else request.headers


def _client_host(request: Any) -> str | None:
    return getattr(getattr(request, "client", None), "host", None)


def _reply(request: Any, reply: Reply) -> mcp_types.CallToolResult:
    """The tool result, or the JSON-RPC error raised with the binding's HTTP status."""
    err = reply.error
    if err is None:
        return _result(reply.body or {})
    if err.is_result:
        return _result(err.body(reply.version))
    raise _as_mcp_error(request, err) from None


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


def _unknown_tool(name: str, known: Sequence[str] = (TOOL_NAME,)) -> Exception:
    from mcp.shared.exceptions import MCPError

    return MCPError(-32602, f"Unknown tool: {name}. This server's tools: {', '.join(known)}.")


def _as_mcp_error(request: Any, err: ProtocolError) -> Exception:
    from mcp.shared.exceptions import MCPError

    _mark_http(request, err)
    return MCPError(err.jsonrpc_code or -32603, err.jsonrpc_message, err.jsonrpc_data())


# Further tools a server lists beside ask_business (the catalog's): name → (tool, handler(request, arguments)).
ExtraTools = Mapping[str, tuple["mcp_types.Tool", Callable[[Any, Mapping[str, Any]], Awaitable[Reply]]]]


def _with_extra(call: Any, extra: ExtraTools | None) -> Any:
    """The call_tool handler, routing the extra tools' names to their handlers."""
    if not extra:
        return call

    async def routed(ctx: ServerRequestContext, params: mcp_types.CallToolRequestParams) -> mcp_types.CallToolResult:
        if params.name in extra:
            arguments = params.arguments or {}
            return _reply(ctx.request, await extra[params.name][1](ctx.request, arguments))
        if params.name != TOOL_NAME:
            raise _unknown_tool(params.name, [TOOL_NAME, *extra])
        result: mcp_types.CallToolResult = await call(ctx, params)
        return result

    return routed


def _server(name: str, instructions: str, tool: mcp_types.Tool, call: Any, extra: ExtraTools | None = None) -> Server:
    # The low-level server: arguments reach our handler unvalidated, so every bad input gets the protocol's
    # invalid_input error (-32602 with messages) rather than the SDK's own validation result.
    import mcp_types as types
    from mcp.server.lowlevel.server import Server

    from ask_engine import __version__

    async def list_tools(ctx: ServerRequestContext, params: Any) -> mcp_types.ListToolsResult:
        return types.ListToolsResult(tools=[tool, *(t for t, _ in (extra or {}).values())])

    return Server(
        name,
        version=__version__,
        instructions=instructions,
        on_list_tools=list_tools,
        on_call_tool=_with_extra(call, extra),
    )


def _ask_argument(args: Any) -> Any:
    ask = args.get("ask")
    if ask is None:
        raise invalid_input("$", 'The `ask` argument is required, e.g. {"ask": {"query": "..."}}.')
    return ask


def _meta_key(args: Any) -> Any:
    meta = args.get("meta")
    return meta.get("idempotency-key") if isinstance(meta, Mapping) else None


def build_ucp_server(service: ShopService, extra_tools: ExtraTools | None = None) -> Server:
    """The UCP MCP server: negotiation from meta["ucp-agent"].profile, idempotency from meta["idempotency-key"]."""
    from ask_engine.conversations import payload_hash

    tool = ucp_tool()

    async def call_tool(ctx: ServerRequestContext, params: mcp_types.CallToolRequestParams) -> mcp_types.CallToolResult:
        if params.name != TOOL_NAME:
            raise _unknown_tool(params.name)
        request = ctx.request
        args = params.arguments or {}
        call = Call(
            binding="UCP MCP ask_business",
            headers=_headers(request),
            client_host=_client_host(request),
            payload=lambda: args,
            profile=lambda a: _profile_url(a.get("meta")),
            ask=_ask_argument,
            key=_meta_key,
            key_name='meta["idempotency-key"]',
            digest=lambda a: payload_hash(a.get("ask")),
        )
        return _reply(request, await service.handle(call))

    instructions = (
        f"UCP business endpoint of {service.name}: call {TOOL_NAME} with meta['ucp-agent'].profile and an ask object."
    )
    return _server(f"{service.name} (UCP)", instructions, tool, call_tool, extra_tools)


def build_shop_server(service: ShopService, *, local: bool = False, extra_tools: ExtraTools | None = None) -> Server:
    """The shop's own MCP server for plain MCP hosts: no meta, no negotiation; `local` = trusted stdio client."""
    tool = shop_tool()

    async def call_tool(ctx: ServerRequestContext, params: mcp_types.CallToolRequestParams) -> mcp_types.CallToolResult:
        if params.name != TOOL_NAME:
            raise _unknown_tool(params.name)
        request = ctx.request
        arguments = params.arguments or {}
        call = Call(
            binding="shop MCP ask_business",
            headers=_headers(request, local=local),
            client_host=_client_host(request),
            payload=lambda: arguments,
        )
        return _reply(request, await service.handle(call))

    shop = getattr(service.engine, "shop", None)
    title = getattr(shop, "name", None) or service.name
    instructions = f"Ask {title} about its products, policies and services with the {TOOL_NAME} tool."
    return _server(title, instructions, tool, call_tool, extra_tools)


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


def _jsonrpc_id(message: dict[str, Any]) -> str | int | None:
    raw = message.get("id")
    return raw if isinstance(raw, str) or (isinstance(raw, int) and not isinstance(raw, bool)) else None


def precheck(body: bytes, ask_argument: str | None) -> tuple[int, dict[str, Any]] | None:
    """What the SDK would answer out of line with docs/server.md, answered here instead: (HTTP status, JSON-RPC
    error message), or None to hand the body on to the SDK.

    - an `id` that is not a string or an integer (the SDK takes it for a notification and answers 202, no body):
      -32600 Invalid Request, id null;
    - tools/call `arguments` that are not an object (the SDK's -32602 carries no data): -32602 with the
      invalid_input message;
    - a lone UTF-16 surrogate anywhere (the SDK's parser calls it -32700): -32602 with one message per string,
      paths relative to the ask object where the string is in it.
    """
    try:
        message = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None  # not JSON: the SDK's parse error (-32700) is the documented answer
    if not isinstance(message, dict) or not isinstance(message.get("method"), str):
        return None
    if "id" in message and _jsonrpc_id(message) is None:
        error = {
            "code": -32600,
            "message": "Invalid Request",
            "data": {"code": "invalid_input", "content": "The JSON-RPC id must be a string or an integer."},
        }
        return 400, {"jsonrpc": "2.0", "id": None, "error": error}
    params = message.get("params")
    arguments = params.get("arguments") if isinstance(params, dict) else None
    if message["method"] == "tools/call" and arguments is not None and not isinstance(arguments, dict):
        kind = type(arguments).__name__
        err = invalid_input(
            "$", f"The tool arguments must be a JSON object (got {kind}), e.g. {_EXAMPLE[ask_argument is not None]}."
        )
        return _error_message(message, err)
    found: list[InvalidInputItem] = []
    if isinstance(arguments, dict):
        asked = arguments.get(ask_argument) if ask_argument else arguments
        found = unpaired_surrogates(asked)
        if ask_argument:
            # outside the ask object (meta): paths relative to the arguments
            found += unpaired_surrogates({k: v for k, v in arguments.items() if k != ask_argument})
    if not found:
        found = unpaired_surrogates(message)
    if found:
        err = ProtocolError("invalid_input", found[0].content, messages=InvalidInput(found).messages())
        return _error_message(message, err)
    return None


_EXAMPLE = {True: '{"meta": {...}, "ask": {"query": "..."}}', False: '{"query": "..."}'}


def _error_message(message: dict[str, Any], err: ProtocolError) -> tuple[int, dict[str, Any]]:
    error = {"code": err.jsonrpc_code or -32603, "message": err.jsonrpc_message, "data": err.jsonrpc_data()}
    return _http_status(err)[0], {"jsonrpc": "2.0", "id": _jsonrpc_id(message), "error": error}


class McpEndpoint:
    """One MCP server as an ASGI app: the SDK's stateless streamable-HTTP transport with JSON responses.

    The body is read here first, capped at `max_body_bytes` plus room for the JSON-RPC envelope (over the cap:
    a JSON-RPC -32602 error, not the SDK's 413 text/plain), and checked for the cases `precheck` answers.
    `ask_argument` names the tool argument that holds the ask object ("ask" for UCP; None: the arguments are it).
    """

    def __init__(self, server: Server, settings: Settings, *, ask_argument: str | None = None) -> None:
        from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

        self.server = server
        self.ask_argument = ask_argument
        self.body_limit = settings.max_body_bytes + _ENVELOPE_BYTES
        self.manager = StreamableHTTPSessionManager(
            app=server,
            json_response=True,
            stateless=True,
            security_settings=_security(settings),
            max_request_body_size=self.body_limit,
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

        if scope["type"] != "http" or scope.get("method") != "POST":
            await self.manager.handle_request(scope, receive, send_with_status)
            return
        body = await self._read(scope, receive, send)
        if body is None:
            return
        refused = precheck(body, self.ask_argument)
        if refused is not None:
            await _send_json(send, *refused)
            return
        await self.manager.handle_request(scope, replaying(body, receive), send_with_status)

    async def _read(self, scope: Scope, receive: Receive, send: Send) -> bytes | None:
        """The whole body, or None once a refusal was sent (over the cap) or the client went away."""
        from starlette.datastructures import Headers

        class _Gone(Exception):
            pass

        async def chunks() -> AsyncIterator[bytes]:
            while True:
                message = await receive()
                if message["type"] == "http.disconnect":
                    raise _Gone
                yield message.get("body", b"")
                if not message.get("more_body", False):
                    return

        too_big = invalid_input("$", f"The request body is larger than {self.body_limit} bytes.")
        try:
            return await read_capped(chunks(), Headers(scope=scope).get("content-length"), self.body_limit, too_big)
        except _Gone:
            return None
        except ProtocolError as err:
            await _send_json(send, *_error_message({}, err))
            return None


async def _send_json(send: Send, status: int, body: dict[str, Any]) -> None:
    raw = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(raw)).encode("ascii"))]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": raw})


# --- stdio -------------------------------------------------------------------------------------------


async def serve_stdio(service: ShopService) -> None:
    """Serve the shop MCP tool over stdin/stdout until the host closes it."""
    from mcp.server.stdio import stdio_server

    server = build_shop_server(service, local=True)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())
