"""The catalog bindings: UCP REST (`POST <rest base>/catalog/search|lookup|product`), the UCP MCP tools
(`search_catalog`, `lookup_catalog`, `get_product` on /ucp/mcp) and the shop MCP's `search_products` (/mcp).

Each call runs the protocol's steps in order, as an ask does: authenticate → rate limit → negotiate (the catalog
capability the operation belongs to; over REST also the project's answer extension) → validate → run in an
engine worker. The explained search (`ask_engine.catalog`) is computed once; the bindings differ only in what of
it they send: REST and UCP MCP send `messages[]` (and REST the verdicts object under the extension key when the
platform declared it), the shop MCP sends it all inline.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from functools import partial
from importlib import resources
from typing import TYPE_CHECKING, Any

from ask_engine.catalog import ucp as wire
from ask_engine.catalog.answer import ANSWER_EXTENSION, ANSWER_SCHEMA, ANSWER_SCHEMA_PATH, ANSWER_VERSION
from ask_engine.errors import InvalidInput, NegotiationError, ProtocolError, StoreError
from ask_engine.server.service import LOCAL_CALLER, Call, Caller, Reply, ShopService, internal_error, invalid_input

if TYPE_CHECKING:
    import mcp_types
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import BaseRoute

    from ask_engine.catalog.search import CatalogSearch

logger = logging.getLogger("ask_engine.server")

SCHEMA_PATH = ANSWER_SCHEMA_PATH
OPERATIONS = {"search": wire.SEARCH, "lookup": wire.LOOKUP, "product": wire.LOOKUP}
UCP_TOOLS = {"search_catalog": "search", "lookup_catalog": "lookup", "get_product": "product"}
SHOP_TOOL = "search_products"
STORE_RETRY_AFTER_S = 5


def answer_schema() -> dict[str, Any]:
    """The JSON Schema of the verdicts object, as the package ships it."""
    text = (resources.files("ask_engine") / "schemas" / "ext" / ANSWER_SCHEMA).read_text("utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


@dataclass(frozen=True)
class _Ran:
    body: dict[str, Any]


class CatalogService:
    """One shop's catalog operations over its live index version."""

    def __init__(self, service: ShopService) -> None:
        self.service = service
        self._searcher: tuple[Any, CatalogSearch] | None = None
        self._lock = threading.Lock()

    def searcher(self) -> CatalogSearch:
        from ask_engine.catalog.search import CatalogSearch

        engine = self.service.engine
        index = engine.index
        with self._lock:
            if self._searcher is None or self._searcher[0] is not index:
                self._searcher = (index, CatalogSearch(index, engine.retriever, engine.embedder))
            return self._searcher[1]

    # --- the steps ----------------------------------------------------------------------------------------

    async def handle(self, call: Call, operation: str, *, extension: bool = False) -> Reply:
        """A UCP catalog call (REST or UCP MCP); `extension`: the verdicts object may be negotiated (REST)."""
        service = self.service
        version = service.settings.ucp_version
        try:
            caller = LOCAL_CALLER if call.headers is None else service.authenticate(call.headers, call.client_host)
            await service.check_rate(caller)
            payload = call.payload()
            offered = {ANSWER_EXTENSION: ANSWER_VERSION} if extension and operation == "search" else None
            try:
                negotiated = await service.negotiator.negotiate(
                    call.profile(payload) if call.profile else None, OPERATIONS[operation], offered
                )
            except NegotiationError as exc:
                raise service.negotiation_error(exc) from None
            version = negotiated.version
            request = self._validate(operation, call.ask(payload))
            envelope = negotiated.envelope()
            with_extension = ANSWER_EXTENSION in negotiated.capabilities
            run = partial(self._run, operation, request, envelope, with_extension)
            body = await service.run_in_worker(run)
        except ProtocolError as err:
            return Reply(version, error=err)
        except Exception:
            logger.exception("%s failed unexpectedly in shop %s", call.binding, service.name)
            return Reply(version, error=internal_error())
        return Reply(version, body=body)

    @staticmethod
    def _validate(operation: str, data: Any) -> dict[str, Any]:
        try:
            return wire.validate(operation, data)
        except InvalidInput as exc:
            raise ProtocolError("invalid_input", str(exc), messages=exc.messages()) from None

    def _run(
        self, operation: str, request: dict[str, Any], envelope: dict[str, Any], extension: bool
    ) -> dict[str, Any]:
        index = self.service.engine.index
        if operation == "search":
            result = wire.run_search(self.searcher(), request)
            return wire.search_body(result, request, envelope, extension=extension)
        if operation == "lookup":
            return wire.lookup_body(index, request, envelope)
        body = wire.product_body(index, request, envelope)
        if body is None:
            message = {
                "type": "error",
                "code": "not_found",
                "content": f"Product not found: {request.get('id')}",
                "severity": "unrecoverable",
            }
            return {"ucp": {**envelope, "status": "error"}, "messages": [message]}
        return body

    # --- the shop MCP's search_products ---------------------------------------------------------------------

    async def search_products(self, call: Call) -> Reply:
        """The explained search for plain MCP hosts: no negotiation; a `conversation` carries what was said."""
        service = self.service
        version = service.settings.ucp_version
        try:
            caller = LOCAL_CALLER if call.headers is None else service.authenticate(call.headers, call.client_host)
            await service.check_rate(caller)
            args = call.payload()
            if not isinstance(args, dict):
                raise invalid_input("$", "The tool arguments must be a JSON object.")
            conversation = args.get("conversation")
            if conversation is not None and not (
                isinstance(conversation, dict) and isinstance(conversation.get("id"), str)
            ):
                raise invalid_input("$.conversation", '`conversation` must be {"id": "<id from an earlier answer>"}.')
            request = self._validate("search", {k: v for k, v in args.items() if k != "conversation"})
            conversation_id = conversation["id"] if conversation else None
            body = await service.run_in_worker(partial(self._search_products, request, caller, conversation_id))
        except ProtocolError as err:
            return Reply(version, error=err)
        except Exception:
            logger.exception("shop MCP search_products failed unexpectedly in shop %s", service.name)
            return Reply(version, error=internal_error())
        return Reply(version, body=body)

    def _search_products(self, request: dict[str, Any], caller: Caller, conversation_id: str | None) -> dict[str, Any]:
        from ask_engine.types import Turn

        store = getattr(self.service.engine, "store", None)
        history: list[str] = []
        notes: list[dict[str, Any]] = []
        try:
            if store is not None and conversation_id is not None:
                turns = store.history(conversation_id, caller.asker)
                if turns is None:
                    notes.append(_not_found_conversation())
                    conversation_id = None
                else:
                    history = [t.query for t in reversed(turns)]
            elif conversation_id is not None:
                notes.append(_not_found_conversation())
                conversation_id = None
            result = wire.run_search(self.searcher(), request, history=history)
            body = wire.search_products_body(result, request)
            if store is not None:
                if conversation_id is None:
                    conversation_id, _ = store.create(caller.asker)
                summary = body["messages"][0]["content"]
                turn = Turn(
                    query=str(request.get("query") or ""),
                    answer=summary,
                    doc_ids=tuple(j.doc.id for j in result.results),
                )
                expires = store.append(conversation_id, caller.asker, turn)
                body["conversation"] = {"id": conversation_id, "expires_at": expires}
        except StoreError as exc:
            logger.error("conversation store failed in shop %s: %s", self.service.name, exc)
            raise ProtocolError(
                "unavailable",
                "The conversation store is unavailable; nothing was recorded. Please retry shortly.",
                retry_after=STORE_RETRY_AFTER_S,
            ) from None
        if notes:
            body["messages"] = notes + body["messages"]
        return body


def _not_found_conversation() -> dict[str, Any]:
    return {
        "type": "info",
        "code": "not_found",
        "path": "$.conversation.id",
        "content": "That conversation could not be continued, so this search starts a new one.",
    }


# --- REST -----------------------------------------------------------------------------------------------------


def rest_routes(prefix: str, catalog: CatalogService) -> list[BaseRoute]:
    """POST <prefix><rest base>/catalog/{search,lookup,product} and GET <prefix>/schemas/ext/answer.json."""
    from starlette.routing import Route

    from ask_engine.server.discovery import REST_PATH

    async def schema(request: Request) -> Response:
        from ask_engine.server.rest import json_response

        return json_response(answer_schema(), 200, {"Cache-Control": "public, max-age=300"})

    routes: list[BaseRoute] = [
        Route(f"{prefix}{REST_PATH}/catalog/{op}", _rest_endpoint(catalog, op), methods=["POST"])
        for op in ("search", "lookup", "product")
    ]
    routes.append(Route(f"{prefix}{SCHEMA_PATH}", schema, methods=["GET"]))
    return routes


def _rest_endpoint(catalog: CatalogService, operation: str) -> Callable[[Request], Awaitable[Response]]:
    from ask_engine.server.negotiation import parse_ucp_agent_header
    from ask_engine.server.rest import _respond, parse_json, read_body, request_id

    settings = catalog.service.settings

    async def endpoint(request: Request) -> Response:
        rid = request_id(request.headers)
        try:
            body = await read_body(request, settings.max_body_bytes)
        except ProtocolError as err:
            return _respond(Reply(settings.ucp_version, error=err), rid)
        except Exception:
            return _respond(Reply(settings.ucp_version, error=internal_error()), rid)
        call = Call(
            binding=f"REST catalog/{operation} (Request-Id {rid})",
            headers=request.headers,
            client_host=request.client.host if request.client else None,
            payload=lambda: parse_json(body),
            profile=lambda _: parse_ucp_agent_header(request.headers.get("ucp-agent")),
        )
        return _respond(await catalog.handle(call, operation, extension=True), rid)

    return endpoint


# --- MCP ------------------------------------------------------------------------------------------------------

ToolHandler = Callable[[Any, Mapping[str, Any]], Awaitable[Reply]]


def _catalog_argument(args: Any) -> Any:
    catalog = args.get("catalog") if isinstance(args, Mapping) else None
    if catalog is None:
        raise invalid_input("$", 'The `catalog` argument is required, e.g. {"catalog": {"query": "..."}}.')
    return catalog


def _tool_schema(operation: str) -> dict[str, Any]:
    from ask_engine.server.mcp_binding import _inline

    ref = {"search": "search", "lookup": "lookup", "product": "product"}[operation]
    resolved = wire.validator(ref).schema
    from ask_engine.models import _registry

    target = _registry().resolver().lookup(resolved["$ref"])
    inlined: dict[str, Any] = _inline(target.contents, target.resolver)
    return inlined


def ucp_tools(catalog: CatalogService) -> dict[str, tuple[mcp_types.Tool, ToolHandler]]:
    """`search_catalog`, `lookup_catalog`, `get_product` for /ucp/mcp: arguments {meta, catalog}."""
    import mcp_types as types

    from ask_engine.server.mcp_binding import _client_host, _headers, _meta_schema, _profile_url

    descriptions = {
        "search": "Search the shop's catalog by free text and filters (price in minor units, categories).",
        "lookup": "Look up products by product or variant id, SKU, handle or product URL.",
        "product": "Full detail of one product or variant, with option selection and availability.",
    }
    tools: dict[str, tuple[mcp_types.Tool, ToolHandler]] = {}
    for name, operation in UCP_TOOLS.items():
        schema = {
            "type": "object",
            "required": ["meta", "catalog"],
            "properties": {"meta": _meta_schema(), "catalog": _tool_schema(operation)},
        }
        tool = types.Tool(
            name=name,
            description=descriptions[operation],
            input_schema=schema,
            annotations=types.ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=False),
        )

        async def handler(request: Any, args: Mapping[str, Any], operation: str = operation, name: str = name) -> Reply:
            call = Call(
                binding=f"UCP MCP {name}",
                headers=_headers(request),
                client_host=_client_host(request),
                payload=lambda: args,
                profile=lambda a: _profile_url(a.get("meta")),
                ask=_catalog_argument,
            )
            return await catalog.handle(call, operation)

        tools[name] = (tool, handler)
    return tools


def shop_tools(catalog: CatalogService, *, local: bool = False) -> dict[str, tuple[mcp_types.Tool, ToolHandler]]:
    """`search_products` for the shop's own MCP: the search request's fields (and `conversation`) as arguments."""
    import mcp_types as types

    from ask_engine.server.mcp_binding import _client_host, _headers

    schema = _tool_schema("search")
    schema = {
        **schema,
        "properties": {
            **schema.get("properties", {}),
            "conversation": {
                "type": "object",
                "required": ["id"],
                "properties": {"id": {"type": "string"}},
                "description": "Replay `conversation` from the previous result: what was said before fills gaps.",
            },
        },
    }
    tool = types.Tool(
        name=SHOP_TOOL,
        title="Search the shop's products",
        description=(
            "Search the shop's products. Besides the products, says what it understood (price bounds in minor "
            "units, required attributes, context), gives each result its verdicts (constraint, outcome, wanted, "
            "found, source), and reports what was ruled out and whether the shop stocks the kind of thing at all."
        ),
        input_schema=schema,
        annotations=types.ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=False),
    )

    async def handler(request: Any, args: Mapping[str, Any]) -> Reply:
        call = Call(
            binding=f"shop MCP {SHOP_TOOL}",
            headers=_headers(request, local=local),
            client_host=_client_host(request),
            payload=lambda: args,
        )
        return await catalog.search_products(call)

    return {SHOP_TOOL: (tool, handler)}
