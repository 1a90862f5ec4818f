"""`ask-engine serve` and `ask-engine mcp-stdio`: open the shops, print ready-to-paste examples, run the server."""

from __future__ import annotations

import argparse
import contextlib
import errno
import json
import logging
import os
import shlex
import socket
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ask_engine.config import Settings
from ask_engine.errors import AskEngineError
from ask_engine.server import discovery
from ask_engine.server.a2a_binding import A2A_PATH

if TYPE_CHECKING:
    from starlette.applications import Starlette

    from ask_engine.server.signing import KeySet

_LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")
_ALL_INTERFACES = ("0.0.0.0", "::", "")
# What `serve --workers N` hands each worker process (JSON): the index folders, the config file and the settings the
# parent settled (the port it bound, the signing key file it made, the embedding threads of one worker).
WORKER_ENV = "ASK_ENGINE_SERVE_WORKER"
_STARTUP_FAILURE = 3  # uvicorn's exit code for a worker that failed before serving: its supervisor then stops


class _Served(Protocol):
    """What the banner reads of a served shop (a ShopService, or a shop a worker process will open)."""

    @property
    def name(self) -> str: ...

    @property
    def engine(self) -> Any: ...


@dataclass(frozen=True)
class _Planned:
    """A shop the worker processes open; the supervisor only names it."""

    name: str
    engine: Any = None


def _display_host(host: str) -> str:
    if host in _ALL_INTERFACES:
        return "127.0.0.1"
    return f"[{host}]" if ":" in host else host


def banner(services: Sequence[_Served], settings: Settings, index_dirs: Sequence[str]) -> str:
    """What `serve` prints: the endpoints, whether auth is on, and examples that work as pasted."""
    from ask_engine import __version__

    root = f"http://{_display_host(settings.host)}:{settings.port}"
    first = services[0]
    title = getattr(getattr(first.engine, "shop", None), "name", None) or first.name
    lines = [f"ask-engine {__version__}: serving {title} ({first.name}) at {root}", ""]
    rows = [
        ("UCP REST", f"POST {root}{discovery.REST_PATH}/ask"),
        ("UCP MCP", f"{root}{discovery.UCP_MCP_PATH}"),
        ("shop MCP", f"{root}{discovery.SHOP_MCP_PATH}"),
        ("A2A", f"{root}{discovery.AGENT_CARD_PATH}  (agent card; JSON-RPC at {root}{A2A_PATH})"),
        ("discovery", f"{root}{discovery.PROFILE_PATH}  (and {discovery.PROFILE_PATH}/{discovery.DRAFT})"),
        ("OpenAPI", f"{root}/openapi.json"),
        ("health", f"{root}/healthz"),
    ]
    lines += [f"  {name:<10} {where}" for name, where in rows]
    if len(services) > 1:
        lines.append("  every shop is also served under its own prefix:")
        lines += [f"    {s.name:<16} {root}/shops/{s.name}{discovery.REST_PATH}/ask" for s in services]
    lines.append("")
    if settings.agent_keys:
        lines.append(f"Auth: on ({len(settings.agent_keys)} agent key(s)); send Authorization: Bearer <key>.")
        auth = ["-H 'Authorization: Bearer <your agent key>'"]
        per = "per agent key"
    else:
        lines.append("Auth: OFF (no agent_keys configured): anyone who can reach this address can ask.")
        auth = []
        per = "per client address"
    lines.append(f"Limits: {settings.rate_limit_per_minute}/minute and {settings.rate_limit_per_hour}/hour {per}.")
    if settings.workers > 1:
        lines.append(
            f"Workers: {settings.workers} processes on this one port, each with its own model and "
            f"{settings.embedding_threads or '?'} embedding thread(s); the index files are memory-mapped and shared."
        )
    if settings.store_url:
        lines.append(
            f"Store: Redis at {settings.redacted_store_url} (prefix {settings.store_prefix}): conversations, "
            "idempotency keys and rate limits shared by every replica that names it."
        )
    question_log = getattr(first.engine, "question_log", None)
    if question_log is not None:
        lines.append(
            f"Question log: on ({question_log.path}); report: ask-engine report --log FILE --index DIR --out DIR"
        )
        if settings.admin_key:
            lines.append(f"Live report: GET {root}/admin/insights with Authorization: Bearer <admin key>")
    lines.append("")

    if settings.trust_profiles:
        profile = "https://platform.example/profile.json"
        lines.append("Platform profiles are trusted without fetching (trust_profiles = true).")
    elif settings.host in _LOOPBACK_HOSTS + _ALL_INTERFACES and settings.loopback_profiles_allowed:
        profile = f"http://127.0.0.1:{settings.port}{discovery.DEMO_AGENT_PATH}"
    else:
        profile = "https://<your platform>/profile.json"
        lines.append("Use your platform's https profile URL in UCP-Agent (or set trust_profiles = true).")
    body = json.dumps({"query": "What is your return policy?"})
    curl = [
        f"curl -s {root}{discovery.REST_PATH}/ask",
        "-H 'Content-Type: application/json'",
        "-H " + shlex.quote(f'UCP-Agent: profile="{profile}"'),
        *auth,
        "-d " + shlex.quote(body),
    ]
    lines.append("Ask over REST:")
    lines.append(" \\\n  ".join(curl))
    lines.append("")
    http_entry: dict[str, object] = {"url": f"{root}{discovery.SHOP_MCP_PATH}"}
    if settings.agent_keys:
        http_entry["headers"] = {"Authorization": "Bearer <your agent key>"}
    index = str(Path(index_dirs[0]).resolve())
    # The interpreter running now has ask_engine installed, wherever the host starts it from.
    stdio_entry = {"command": sys.executable, "args": ["-m", "ask_engine.cli", "mcp-stdio", "--index", index]}
    lines.append("MCP host config (streamable HTTP):")
    lines.append(json.dumps({"mcpServers": {first.name: http_entry}}, indent=2))
    lines.append("MCP host config (stdio, e.g. a desktop app):")
    lines.append(json.dumps({"mcpServers": {first.name: stdio_entry}}, indent=2))
    return "\n".join(lines)


def signing_line(keys: KeySet | None, settings: Settings) -> str:
    """What `serve` says of response signatures: off, or the signing kid, its key file and the other published kids."""
    if keys is None:
        return "Signatures: OFF (sign_responses = false)."
    where = settings.signing_key_file or "the signing_key setting"
    line = f"Signatures: RFC 9421 ES256 on every response, keyid {keys.signing.kid} (key: {where})"
    if keys.others:
        line += "; also published: " + ", ".join(k.kid for k in keys.others)
    return line + "."


def bind_listener(host: str, port: int) -> socket.socket:
    """A listening socket on host:port, or AskEngineError when that address is taken or cannot be bound.

    `serve` binds before it loads the model or prints anything, so a busy port fails at once; uvicorn then serves
    on this very socket, leaving no window for another process to take the port in between.
    """
    try:
        infos = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except (OSError, UnicodeError) as exc:
        raise AskEngineError(f"cannot serve on {host}:{port}: the host does not resolve ({exc})") from None
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    try:
        if sys.platform != "win32":  # as uvicorn does: a restart may rebind while old connections linger
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if family == socket.AF_INET6:
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
        sock.bind(address)
        sock.listen(2048)
    except OSError as exc:
        sock.close()
        shown = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        if exc.errno in (errno.EADDRINUSE, getattr(errno, "WSAEADDRINUSE", -1)):
            raise AskEngineError(
                f"cannot serve on {shown}: the port is already in use (another server is listening there); "
                "stop it or choose another --port"
            ) from None
        raise AskEngineError(f"cannot serve on {shown}: {exc.strerror or exc}") from None
    sock.set_inheritable(True)
    return sock


def _with_signing_key(settings: Settings) -> Settings:
    """`settings`, naming the development signing key (made on the first `serve`, kept outside any repository) when
    responses are signed and no key is configured."""
    if settings.sign_responses and not (settings.signing_key_file or settings.signing_key):
        from ask_engine.config import dev_signing_key_path
        from ask_engine.server.signing import ensure_dev_key

        return settings.model_copy(update={"signing_key_file": str(ensure_dev_key(dev_signing_key_path()))})
    return settings


def cli_serve(args: argparse.Namespace) -> int:
    """Serve every --index over HTTP until interrupted: in this process, or in `--workers` processes."""
    settings = Settings.load(args.config, host=args.host, port=args.port, workers=getattr(args, "workers", None))
    if settings.workers > 1 and not settings.store_url:
        raise AskEngineError(
            f"--workers {settings.workers} needs store_url (Redis): without it rate limits are kept in each "
            "process's memory, so every worker would allow the whole limit again; set store_url "
            "(ASK_ENGINE_STORE_URL=redis://host:6379/0) or serve with one worker"
        )
    sock = bind_listener(settings.host, settings.port)
    try:
        if settings.port == 0:  # an ephemeral port: show the one the system chose
            settings = settings.model_copy(update={"port": sock.getsockname()[1]})
        index_dirs = [str(d) for d in args.index]
        settings = _with_signing_key(settings)
        if settings.workers > 1:
            return _serve_workers(sock, settings, index_dirs, args.config)
        import uvicorn

        from ask_engine.server.app import create_app

        app = create_app(index_dirs, settings)
        print(banner(app.state.services, settings, index_dirs), flush=True)
        print(signing_line(app.state.signing_keys, settings), flush=True)
        server = uvicorn.Server(uvicorn.Config(app, host=settings.host, port=settings.port, log_level="info"))
        server.run(sockets=[sock])
    finally:
        sock.close()
    return 0


def _serve_workers(sock: socket.socket, settings: Settings, index_dirs: list[str], config: str | None) -> int:
    """`settings.workers` uvicorn worker processes answering on `sock`, each opening every shop itself.

    What would fail in every worker fails here first, once: a missing index, a bad shop name, a bad signing key.
    Each worker gets `embedding_threads` (default: the cores shared out, at least one), so workers × threads stays
    within the cores. A worker that fails to start stops them all, and `serve` exits with its error.
    """
    import uvicorn
    from uvicorn.supervisors import Multiprocess

    from ask_engine.indexes import live_version
    from ask_engine.server.app import shop_name
    from ask_engine.server.signing import load_keys

    names = [shop_name(d) for d in index_dirs]
    for index_dir in index_dirs:
        live_version(index_dir)
    keys = load_keys(settings) if settings.sign_responses else None
    threads = settings.embedding_threads or max(1, (os.cpu_count() or 1) // settings.workers)
    settings = settings.model_copy(update={"embedding_threads": threads})
    overrides = {
        "host": settings.host,
        "port": settings.port,
        "signing_key_file": settings.signing_key_file,
        "embedding_threads": threads,
        "workers": settings.workers,
    }
    os.environ[WORKER_ENV] = json.dumps({"index": index_dirs, "config": config, "overrides": overrides})
    try:
        print(banner([_Planned(n) for n in names], settings, index_dirs), flush=True)
        print(signing_line(keys, settings), flush=True)
        app = f"{__name__}:worker_app"
        uv_config = uvicorn.Config(
            app, factory=True, host=settings.host, port=settings.port, workers=settings.workers, log_level="info"
        )
        supervisor = Multiprocess(uv_config, sockets=[sock])
        supervisor.run()
    finally:
        os.environ.pop(WORKER_ENV, None)
    if any(p.exitcode == _STARTUP_FAILURE for p in supervisor.processes):
        raise AskEngineError("a worker process failed to start (its error is logged above); nothing is served")
    return 0


def worker_app() -> Starlette:
    """The app of one `serve --workers N` process (uvicorn's factory), from what the parent put in WORKER_ENV.

    An error opening a shop exits with uvicorn's startup-failure code, so the supervisor stops instead of restarting
    a worker that would fail the same way again."""
    from ask_engine.server.app import create_app

    log = logging.getLogger("ask_engine.server")
    try:
        spec = json.loads(os.environ[WORKER_ENV])
        settings = Settings.load(spec["config"], **spec["overrides"])
        return create_app(spec["index"], settings)
    except AskEngineError as exc:
        log.error("worker %d could not start: %s", os.getpid(), exc)
    except Exception:
        log.exception("worker %d could not start", os.getpid())
    sys.exit(_STARTUP_FAILURE)


def cli_mcp_stdio(args: argparse.Namespace) -> int:
    """Serve the shop MCP tool of one index over stdin/stdout (a local, trusted desktop MCP host)."""
    import anyio

    from ask_engine.server.app import build_services, close_shops, open_shops
    from ask_engine.server.mcp_binding import serve_stdio

    settings = Settings.load(args.config)
    # stdout is the protocol channel: anything a library prints while loading goes to stderr instead.
    with contextlib.redirect_stdout(sys.stderr):
        shops = open_shops([args.index], settings)
    try:
        service = build_services(shops, settings)[0]
        anyio.run(serve_stdio, service)
    finally:
        close_shops(shops)
    return 0
