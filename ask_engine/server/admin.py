"""The admin routes: the merchant's insights report rendered live from the question log, behind its own key.

`GET <prefix>/admin/insights` (HTML) and `<prefix>/admin/insights.json`, mounted only when `admin_key` is set and the
shop keeps a question log. Only `Authorization: Bearer <admin_key>` opens them: agent keys never do.
"""

from __future__ import annotations

import hashlib
import hmac
from typing import TYPE_CHECKING, Any

from ask_engine.errors import ProtocolError, StoreError

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import BaseRoute

    from ask_engine.server.service import ShopService

INSIGHTS_PATH = "/admin/insights"
LIVE_ROWS = 50_000  # the newest rows the live report reads
_REALM = 'Bearer realm="ask-engine-admin"'


def admin_routes(prefix: str, service: ShopService) -> list[BaseRoute]:
    """The shop's admin routes under `prefix`; none without an admin key or a question log."""
    import anyio
    from starlette.routing import Route

    admin_key = service.settings.admin_key
    question_log = getattr(service.engine, "question_log", None)
    if not admin_key or question_log is None:
        return []
    expected = hashlib.sha256(admin_key.encode("utf-8")).digest()
    one_at_a_time = anyio.Lock()  # a report embeds every unanswered question: one build at a time

    def build() -> dict[str, Any]:
        from ask_engine.insights.log import read_log
        from ask_engine.insights.report import build_report

        question_log.flush()
        entries = read_log(question_log.path, limit=LIVE_ROWS)
        return build_report(entries, service.engine.index, service.engine.embedder, log_path=question_log.path)

    async def report(request: Request) -> dict[str, Any]:
        _check_key(request, expected)
        async with one_at_a_time:
            try:
                return await anyio.to_thread.run_sync(build)
            except StoreError as exc:
                raise ProtocolError("unavailable", f"The question log can't be read: {exc}", retry_after=5) from None

    async def html(request: Request) -> Response:
        from starlette.responses import HTMLResponse

        from ask_engine.insights.render import render_html

        try:
            data = await report(request)
        except ProtocolError as err:
            return _refused(err, service)
        page = await anyio.to_thread.run_sync(render_html, data)
        return HTMLResponse(page, headers={"Cache-Control": "no-store"})

    async def json_report(request: Request) -> Response:
        from starlette.responses import JSONResponse

        try:
            data = await report(request)
        except ProtocolError as err:
            return _refused(err, service)
        return JSONResponse(data, headers={"Cache-Control": "no-store"})

    return [
        Route(f"{prefix}{INSIGHTS_PATH}", html, methods=["GET"]),
        Route(f"{prefix}{INSIGHTS_PATH}.json", json_report, methods=["GET"]),
    ]


def _check_key(request: Request, expected: bytes) -> None:
    scheme, _, token = (request.headers.get("authorization") or "").strip().partition(" ")
    presented = token.strip() if scheme.lower() == "bearer" else ""
    digest = hashlib.sha256(presented.encode("utf-8")).digest()
    if not presented or not hmac.compare_digest(digest, expected):
        raise ProtocolError(
            "unauthorized",
            "The admin key is required: send Authorization: Bearer <admin_key>.",
            headers={"WWW-Authenticate": _REALM},
        )


def _refused(err: ProtocolError, service: ShopService) -> Response:
    from starlette.responses import JSONResponse

    body = err.body(service.settings.ucp_version)
    return JSONResponse(body, status_code=err.http_status, headers={**err.http_headers(), "Cache-Control": "no-store"})
