"""The A2A binding of ask_business (official `a2a-sdk`): the agent card at /.well-known/agent-card.json and a
JSON-RPC endpoint whose messages carry the ask object, and return the UCP response, as a DataPart under
`a2a.ucp.ask` (the checkout binding's `a2a.ucp.<capability>` pattern).

- Conversations: the reply's `contextId` is the UCP conversation id; a follow-up that sends that `contextId` (and
  no `conversation` in the ask) continues the conversation, as `conversation.id` would.
- Idempotency: the A2A `messageId` is the idempotency key (the binding's rule), bound to the canonical JSON of the
  ask object, as over MCP: a retried message gets the stored answer and appends no turn; the same messageId with
  another ask gets an `idempotency_conflict` error_response. (A shop served without a conversation store, which
  only tests and embedders do, answers every message afresh.)
- Errors: agent key and rate limit are checked over HTTP before the SDK reads the message (401 + WWW-Authenticate,
  429 + Retry-After, with a JSON-RPC error body); every other UCP error comes back in-band as the UCP
  error_response in the DataPart, as A2A carries structured outcomes.
"""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ask_engine.models import CAPABILITY
from ask_engine.server.discovery import AGENT_CARD_PATH
from ask_engine.server.service import Call, Caller, ProtocolError, ShopService, invalid_input
from ask_engine.server.streams import replaying

if TYPE_CHECKING:
    from a2a.server.agent_execution import RequestContext
    from a2a.server.events import EventQueue
    from a2a.types.a2a_pb2 import AgentCard, Message
    from starlette.types import Receive, Scope, Send

logger = logging.getLogger("ask_engine.server")

A2A_PATH = "/a2a"  # the JSON-RPC endpoint, named in the card's supported interface
DATA_KEY = "a2a.ucp.ask"
ACCEPTED_KEYS = (DATA_KEY, CAPABILITY)  # an ask is also read under the capability's own name
_CALLER = "ask_engine.a2a_caller"  # scope and call-context key of the asker checked over HTTP
_SENT_CONTEXT = "ask_engine.a2a_context_id"  # call-context key of the contextId the client sent (the SDK makes one)


def extension_uri(version: str) -> str:
    """The UCP A2A extension's URI (checkout/a2a.md, "A2A Interactions")."""
    return f"https://ucp.dev/{version}/specification/reference"


def agent_card(service: ShopService, base_url: str) -> AgentCard:
    """The shop's agent card: one JSON-RPC interface, the UCP extension declaring `dev.ucp.common.ask`."""
    from a2a.types.a2a_pb2 import (
        AgentCapabilities,
        AgentCard,
        AgentExtension,
        AgentInterface,
        AgentSkill,
        HTTPAuthSecurityScheme,
        SecurityRequirement,
        SecurityScheme,
        StringList,
    )
    from google.protobuf.struct_pb2 import Struct

    from ask_engine import __version__

    settings = service.settings
    version = settings.ucp_version
    shop = getattr(service.engine, "shop", None)
    title = getattr(shop, "name", None) or service.name
    params = Struct()
    params.update({"capabilities": {CAPABILITY: [{"version": v} for v in service.negotiator.business_versions()]}})
    card = AgentCard(
        name=title,
        description=f"Answers questions about {title}'s products, policies and services (UCP {CAPABILITY}). "
        "Read-only: it never changes a cart, order or account.",
        version=__version__,
        supported_interfaces=[
            AgentInterface(url=base_url + A2A_PATH, protocol_binding="JSONRPC", protocol_version="1.0")
        ],
        capabilities=AgentCapabilities(
            streaming=False,
            push_notifications=False,
            extensions=[
                AgentExtension(uri=extension_uri(version), description="Business agent supporting UCP", params=params)
            ],
        ),
        default_input_modes=["application/json", "text/plain"],
        default_output_modes=["application/json", "text/plain"],
        skills=[
            AgentSkill(
                id="ask_business",
                name="Ask the business",
                description=f"Send the UCP ask object as a data part under {DATA_KEY!r} (or a plain-text question); "
                f"the reply carries the UCP answer, links and messages under {DATA_KEY!r}.",
                tags=["ucp", "shopping", "questions"],
                examples=["What is your return policy?"],
            )
        ],
    )
    if settings.agent_keys:
        card.security_schemes["bearer"].CopyFrom(
            SecurityScheme(http_auth_security_scheme=HTTPAuthSecurityScheme(scheme="bearer"))
        )
        card.security_requirements.append(SecurityRequirement(schemes={"bearer": StringList(list=[])}))
    return card


# --- the message ---------------------------------------------------------------------------------------------


def read_ask(message: Message) -> tuple[Any, str]:
    """The ask object a message carries and the key it came under: a DataPart under one of ACCEPTED_KEYS, else
    the text parts as the query. ProtocolError(invalid_input) when there is neither."""
    from google.protobuf.json_format import MessageToDict

    for part in message.parts:
        if part.HasField("data"):
            data = MessageToDict(part.data)
            if isinstance(data, dict):
                for key in ACCEPTED_KEYS:
                    if key in data:
                        return data[key], key
    texts = [part.text for part in message.parts if part.HasField("text")]
    if any(text.strip() for text in texts):
        return {"query": "\n".join(texts)}, DATA_KEY
    raise invalid_input(
        "$",
        f'The message carries no ask: send a data part {{"{DATA_KEY}": {{"query": "..."}}}} or a text part.',
    )


def _request_context_builder() -> Any:
    from a2a.server.agent_execution import SimpleRequestContextBuilder

    class RequestContextBuilder(SimpleRequestContextBuilder):
        """Notes the contextId as the client sent it: the SDK then fills a new one in the message itself."""

        async def build(
            self, context: Any, params: Any = None, task_id: Any = None, context_id: Any = None, task: Any = None
        ) -> Any:
            context.state[_SENT_CONTEXT] = context_id or ""
            return await super().build(context, params, task_id, context_id, task)

    return RequestContextBuilder(should_populate_referred_tasks=False, task_store=None)


def _with_context(ask: Any, context_id: str) -> Any:
    """The ask, continuing the A2A context's conversation when the ask names none."""
    if context_id and isinstance(ask, dict) and "conversation" not in ask:
        return {**ask, "conversation": {"id": context_id}}
    return ask


def reply_message(body: Mapping[str, Any], key: str, context_id: str) -> Message:
    """The agent's Message: the UCP response under `key`, and the plain answer as text for A2A-only clients."""
    from a2a.types.a2a_pb2 import Message, Part, Role
    from google.protobuf.struct_pb2 import Value

    data = Value()
    data.struct_value.update({key: dict(body)})
    parts = [Part(data=data, media_type="application/json")]
    plain = (body.get("answer") or {}).get("plain") if isinstance(body.get("answer"), Mapping) else None
    if isinstance(plain, str) and plain:
        parts.append(Part(text=plain, media_type="text/plain"))
    return Message(role=Role.ROLE_AGENT, message_id=str(uuid.uuid4()), context_id=context_id, parts=parts)


def _executor(service: ShopService) -> Any:
    from a2a.server.agent_execution import AgentExecutor

    from ask_engine.conversations import payload_hash
    from ask_engine.server.negotiation import parse_ucp_agent_header

    class AskExecutor(AgentExecutor):
        """One ask per message: the service's steps (negotiation, validation, idempotency, answer), one reply."""

        async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
            message = context.message
            assert message is not None  # the SDK builds the context from a SendMessage request
            state = context.call_context.state if context.call_context else {}
            headers: Mapping[str, str] = state.get("headers") or {}
            caller = state.get(_CALLER)
            key = DATA_KEY
            try:
                ask, key = read_ask(message)
            except ProtocolError as err:
                body = err.body(service.settings.ucp_version)
            else:
                ask = _with_context(ask, state.get(_SENT_CONTEXT) or "")
                call = Call(
                    binding="A2A ask_business",
                    headers=headers,
                    payload=lambda: ask,
                    profile=lambda _: parse_ucp_agent_header(headers.get("ucp-agent")),
                    # no conversation store (an engine served without one): nothing to keep the key in
                    key=(lambda _: message.message_id) if service.store is not None else None,
                    key_name="message.messageId",
                    digest=payload_hash,
                )
                reply = await service.handle(call, caller=caller if isinstance(caller, Caller) else None)
                body = reply.error.body(reply.version) if reply.error is not None else (reply.body or {})
            conversation = body.get("conversation") if isinstance(body, dict) else None
            conversation_id = conversation.get("id") if isinstance(conversation, dict) else None
            await event_queue.enqueue_event(reply_message(body, key, conversation_id or context.context_id or ""))

        async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
            from a2a.utils.errors import TaskNotCancelableError

            raise TaskNotCancelableError("An ask is answered at once; there is nothing to cancel.")

    return AskExecutor()


# --- HTTP ----------------------------------------------------------------------------------------------------


class A2AEndpoint:
    """The JSON-RPC endpoint as an ASGI app: the body read within the size cap, the agent key and rate limit
    checked, then the SDK's dispatcher (A2A 1.0, and 0.3's `message/send` as the UCP binding page writes it)."""

    def __init__(self, service: ShopService) -> None:
        from a2a.server.request_handlers import DefaultRequestHandler
        from a2a.server.routes import DefaultServerCallContextBuilder
        from a2a.server.routes.jsonrpc_dispatcher import JsonRpcDispatcher
        from a2a.server.tasks import InMemoryTaskStore

        from ask_engine.server.mcp_binding import _ENVELOPE_BYTES

        class ContextBuilder(DefaultServerCallContextBuilder):
            def build(self, request: Any) -> Any:
                context = super().build(request)
                context.state[_CALLER] = request.scope.get(_CALLER)
                return context

        self.service = service
        self.body_limit = service.settings.max_body_bytes + _ENVELOPE_BYTES
        # The card the handler checks requests against (streaming, push): its URL is not used by the handler.
        handler = DefaultRequestHandler(
            _executor(service),
            InMemoryTaskStore(),
            agent_card(service, ""),
            request_context_builder=_request_context_builder(),
        )
        self.dispatcher = JsonRpcDispatcher(handler, context_builder=ContextBuilder(), enable_v0_3_compat=True)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        from starlette.requests import ClientDisconnect, Request

        from ask_engine.server.rest import read_body

        request = Request(scope, receive)
        body: bytes | None = None
        try:
            body = await read_body(request, self.body_limit)
            caller = self.service.authenticate(request.headers, request.client.host if request.client else None)
            await self.service.check_rate(caller)
        except ClientDisconnect:
            return
        except ProtocolError as err:
            await _refuse(send, err, _request_id(body))
            return
        scope[_CALLER] = caller
        replay = replaying(body, receive)
        response = await self.dispatcher.handle_requests(Request(scope, replay))
        await response(scope, replay, send)


def _request_id(body: bytes | None) -> Any:
    try:
        message = json.loads(body or b"")
    except (ValueError, RecursionError):
        return None
    raw = message.get("id") if isinstance(message, dict) else None
    return raw if isinstance(raw, str) or (isinstance(raw, int) and not isinstance(raw, bool)) else None


async def _refuse(send: Send, err: ProtocolError, request_id: Any) -> None:
    """A JSON-RPC error with the HTTP status and headers of the UCP error table (401, 429, 400 for the size cap)."""
    error = {"code": err.jsonrpc_code or -32603, "message": err.jsonrpc_message, "data": err.jsonrpc_data()}
    raw = json.dumps({"jsonrpc": "2.0", "id": request_id, "error": error}, separators=(",", ":")).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(raw)).encode())]
    headers += [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in err.http_headers().items()]
    await send({"type": "http.response.start", "status": err.http_status, "headers": headers})
    await send({"type": "http.response.body", "body": raw})


def routes(prefix: str, service: ShopService, base_url: Any) -> list[Any]:
    """The agent card and the JSON-RPC endpoint of one shop under `prefix`; `base_url(request, prefix)` is the
    shop's URL as the caller reached it."""
    from a2a.server.request_handlers.response_helpers import agent_card_to_dict
    from starlette.requests import Request
    from starlette.responses import JSONResponse, Response
    from starlette.routing import Route

    from ask_engine.server.discovery import CACHE_CONTROL

    async def card(request: Request) -> Response:
        document = agent_card_to_dict(agent_card(service, base_url(request, prefix)))
        # UCP's agent_card schema (transports/a2a_message.json) reads the extensions at the top level; A2A 1.0
        # keeps them under capabilities (and its clients ignore the unknown top-level copy).
        document["extensions"] = document["capabilities"]["extensions"]
        return JSONResponse(document, headers={"Cache-Control": CACHE_CONTROL})

    return [
        Route(f"{prefix}{AGENT_CARD_PATH}", card, methods=["GET"]),
        Route(f"{prefix}{A2A_PATH}", A2AEndpoint(service), methods=["POST"]),
    ]
