"""Negotiation against real platform profiles served from a loopback HTTP(S) server."""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import socket
import ssl
import threading
import time
from collections import Counter
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import httpx
import pytest

from ask_engine.config import Settings
from ask_engine.models import CAPABILITY, schema_errors
from ask_engine.server.negotiation import (
    Negotiated,
    NegotiationError,
    Negotiator,
    intersect,
    parse_ucp_agent_header,
)

V = "2026-08-25"
OLD = "2026-01-11"


def profile(version: str = V, ask_versions: list[str] | None = None, *, full: bool = True) -> dict[str, Any]:
    entries = [
        {"version": v, "spec": "https://ucp.dev/spec", "schema": "https://ucp.dev/schemas/common/ask.json"}
        if full
        else {"version": v}
        for v in (ask_versions if ask_versions is not None else [version])
    ]
    ucp: dict[str, Any] = {"version": version, "capabilities": {CAPABILITY: entries}}
    if full:
        ucp["services"] = {}
        ucp["payment_handlers"] = {}
    return {"ucp": ucp}


ROUTES: dict[str, tuple[int, dict[str, str], bytes]] = {
    "/good.json": (200, {}, json.dumps(profile()).encode()),
    "/lenient.json": (200, {}, json.dumps(profile(full=False)).encode()),
    "/old.json": (200, {}, json.dumps(profile(OLD)).encode()),
    "/future.json": (200, {}, json.dumps(profile("2099-01-01")).encode()),
    "/no-ask.json": (
        200,
        {},
        json.dumps({"ucp": {"version": V, "capabilities": {"dev.ucp.shopping.checkout": [{"version": V}]}}}).encode(),
    ),
    "/no-capabilities.json": (200, {}, json.dumps({"ucp": {"version": V, "services": {}}}).encode()),
    "/ask-other-version.json": (200, {}, json.dumps(profile(V, [OLD])).encode()),
    "/ask-two-versions.json": (200, {}, json.dumps(profile(OLD, ["2025-12-01", OLD])).encode()),
    "/legacy-list.json": (
        200,
        {},
        json.dumps({"ucp": {"version": V, "capabilities": [{"name": CAPABILITY, "version": V}]}}).encode(),
    ),
    "/ask-entry-without-version.json": (
        200,
        {},
        json.dumps({"ucp": {"version": V, "capabilities": {CAPABILITY: [{"spec": "x"}]}}}).encode(),
    ),
    "/redirect": (302, {"Location": "/good.json"}, b""),
    "/missing": (404, {}, b"not found"),
    "/error": (503, {}, b"down"),
    "/not-json": (200, {"Content-Type": "text/html"}, b"<html>hello</html>"),
    "/no-ucp.json": (200, {}, b'{"profile": {"version": "2026-08-25"}}'),
    "/no-version.json": (200, {}, b'{"ucp": {"capabilities": {}}}'),
    "/array.json": (200, {}, b"[1, 2, 3]"),
}
HUGE = b'{"ucp": {"version": "2026-08-25", "padding": "' + b"x" * 300_000 + b'"}}'


class Handler(BaseHTTPRequestHandler):
    # shared by every request: the tests read what the server saw
    hits: ClassVar[Counter[str]] = Counter()
    hosts: ClassVar[list[str]] = []
    lock: ClassVar[threading.Lock] = threading.Lock()

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        with self.lock:
            self.hits[self.path] += 1
            self.hosts.append(self.headers.get("Host", ""))
        if self.path == "/slow":
            time.sleep(1.5)
            self._send(200, {}, json.dumps(profile()).encode())
        elif self.path == "/huge-declared":
            self._send(200, {}, HUGE)
        elif self.path == "/huge-streamed":
            # no Content-Length: the cap must hold while reading
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Connection", "close")
            self.end_headers()
            for i in range(0, len(HUGE), 16_384):
                self.wfile.write(HUGE[i : i + 16_384])
        else:
            self._send(*ROUTES.get(self.path, (404, {}, b"")))

    def _send(self, status: int, headers: dict[str, str], body: bytes) -> None:
        self.send_response(status)
        headers = {"Content-Type": "application/json", **headers}
        for k, v in headers.items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # clients that give up early (timeouts, size caps) are part of the tests


def serve(server: ThreadingHTTPServer) -> Iterator[str]:
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield str(server.server_address[1])
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def port() -> Iterator[str]:
    yield from serve(Server(("127.0.0.1", 0), Handler))


@pytest.fixture
def base(port: str) -> str:
    with Handler.lock:
        Handler.hits.clear()
        Handler.hosts.clear()
    return f"http://127.0.0.1:{port}"


def settings(**kw: Any) -> Settings:
    values: dict[str, Any] = {"supported_versions": [V], "ucp_version": V, "profile_timeout_s": 1.0}
    values.update(kw)
    return Settings(**values)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


async def failure(negotiator: Negotiator, url: str | None) -> NegotiationError:
    with pytest.raises(NegotiationError) as info:
        await negotiator.negotiate(url)
    return info.value


# --- the UCP-Agent header -------------------------------------------------------------------------------


def test_ucp_agent_header_yields_the_profile_url() -> None:
    assert parse_ucp_agent_header('profile="https://agent.example/p.json"') == "https://agent.example/p.json"
    assert parse_ucp_agent_header('version=1, profile="https://a.example/p";x=1') == "https://a.example/p"


def test_ucp_agent_header_absent_or_without_profile_is_none() -> None:
    assert parse_ucp_agent_header(None) is None
    assert parse_ucp_agent_header("") is None
    assert parse_ucp_agent_header('other="x"') is None


@pytest.mark.parametrize(
    "value",
    ["profile=https://a.example/p", 'profile="unterminated', "profile=(1 2)", 'profile="é"', "https://a.example/p"],
)
def test_malformed_ucp_agent_header_is_invalid_profile_url(value: str) -> None:
    with pytest.raises(NegotiationError) as info:
        parse_ucp_agent_header(value)
    assert info.value.code == "invalid_profile_url"
    assert info.value.http_status == 400


# --- successful negotiation -----------------------------------------------------------------------------


async def test_good_profile_negotiates_its_version_and_the_ask_capability(base: str) -> None:
    result = await Negotiator(settings()).negotiate(f"{base}/good.json")
    assert result == Negotiated(V, f"{base}/good.json", {CAPABILITY: [V]})
    assert result.envelope() == {"version": V, "capabilities": {CAPABILITY: [{"version": V}]}}


async def test_profile_missing_spec_schema_and_registries_is_accepted(base: str) -> None:
    result = await Negotiator(settings()).negotiate(f"{base}/lenient.json")
    assert result.version == V and result.capabilities == {CAPABILITY: [V]}


async def test_legacy_capability_array_is_read(base: str) -> None:
    assert (await Negotiator(settings()).negotiate(f"{base}/legacy-list.json")).capabilities == {CAPABILITY: [V]}


async def test_platform_on_an_older_supported_version_gets_that_version(base: str) -> None:
    negotiator = Negotiator(settings(supported_versions=[OLD, V]))
    assert negotiator.business_versions() == [V, OLD]
    result = await negotiator.negotiate(f"{base}/ask-two-versions.json")
    assert result.version == OLD
    assert result.capabilities == {CAPABILITY: [OLD]}


async def test_pinned_connection_keeps_the_hostname_in_the_host_header(base: str, port: str) -> None:
    result = await Negotiator(settings()).negotiate(f"http://localhost:{port}/good.json")
    assert result.version == V
    assert Handler.hosts == [f"localhost:{port}"]


def test_intersection_picks_the_highest_exactly_shared_version() -> None:
    business = {CAPABILITY: ["2026-01-11", "2026-08-25"], "dev.ucp.x": ["2026-01-11"]}
    platform = {CAPABILITY: ("2026-08-25", "2026-01-11", "2027-01-01"), "dev.ucp.x": ("2026-01-12",)}
    assert intersect(business, platform) == {CAPABILITY: ["2026-08-25"]}


# --- fetch failures -------------------------------------------------------------------------------------


async def test_redirect_is_not_followed_and_is_unreachable(base: str) -> None:
    err = await failure(Negotiator(settings()), f"{base}/redirect")
    assert (err.code, err.http_status) == ("profile_unreachable", 424)
    assert Handler.hits["/good.json"] == 0


@pytest.mark.parametrize("path", ["/missing", "/error"])
async def test_non_200_answer_is_unreachable(base: str, path: str) -> None:
    err = await failure(Negotiator(settings()), base + path)
    assert (err.code, err.http_status) == ("profile_unreachable", 424)
    assert err.mcp_code == -32001
    assert err.body() == {"code": "profile_unreachable", "content": err.content}


async def test_refused_connection_is_unreachable() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed_port = s.getsockname()[1]
    err = await failure(Negotiator(settings()), f"http://127.0.0.1:{closed_port}/p.json")
    assert err.code == "profile_unreachable"


async def test_profile_slower_than_the_timeout_is_unreachable(base: str) -> None:
    err = await failure(Negotiator(settings(profile_timeout_s=0.3)), f"{base}/slow")
    assert err.code == "profile_unreachable"


@pytest.mark.parametrize("path", ["/huge-declared", "/huge-streamed"])
async def test_profile_over_the_size_cap_is_malformed(base: str, path: str) -> None:
    err = await failure(Negotiator(settings(profile_max_bytes=128 * 1024)), base + path)
    assert (err.code, err.http_status) == ("profile_malformed", 422)


@pytest.mark.parametrize(
    "path", ["/not-json", "/no-ucp.json", "/no-version.json", "/array.json", "/ask-entry-without-version.json"]
)
async def test_unusable_profile_document_is_malformed(base: str, path: str) -> None:
    err = await failure(Negotiator(settings()), base + path)
    assert (err.code, err.http_status) == ("profile_malformed", 422)


# --- version and capability outcomes --------------------------------------------------------------------


@pytest.mark.parametrize("path", ["/old.json", "/future.json"])
async def test_unsupported_protocol_version_is_refused(base: str, path: str) -> None:
    err = await failure(Negotiator(settings()), base + path)
    assert (err.code, err.http_status, err.mcp_code) == ("version_unsupported", 422, -32001)
    assert V in err.content
    assert err.mcp_message == "Protocol version not supported"


@pytest.mark.parametrize("path", ["/no-ask.json", "/no-capabilities.json", "/ask-other-version.json"])
async def test_no_common_ask_version_is_capabilities_incompatible(base: str, path: str) -> None:
    err = await failure(Negotiator(settings()), base + path)
    assert (err.code, err.http_status, err.mcp_code) == ("capabilities_incompatible", 200, None)
    assert err.version == V
    body = err.error_response(V)
    assert body["messages"][0]["code"] == "capabilities_incompatible"
    assert schema_errors("error_response", body) == []


# --- URL policy -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "url",
    [
        None,
        "",
        "/relative/profile.json",
        "ftp://agent.example/p.json",
        "http://agent.example/p.json",  # plain http off loopback
        "https://user:pw@agent.example/p.json",
        "https://10.0.0.8/p.json",
        "https://192.168.1.1/p.json",
        "https://169.254.169.254/latest/meta-data",
        "https://[fd00::1]/p.json",
        "https://[::ffff:10.0.0.1]/p.json",
        "https://100.64.0.1/p.json",
        "https://224.0.0.1/p.json",
        "https://agent.example:99999/p.json",
        "https://agent .example/p.json",
        "https://" + "a" * 3000 + ".example/",
    ],
)
async def test_invalid_or_forbidden_profile_url_is_refused_before_any_fetch(url: str | None) -> None:
    err = await failure(Negotiator(settings()), url)
    assert (err.code, err.http_status) == ("invalid_profile_url", 400)


async def test_loopback_profiles_are_refused_when_not_allowed(port: str) -> None:
    negotiator = Negotiator(settings(allow_http_loopback_profiles=False))
    for url in (f"http://127.0.0.1:{port}/good.json", f"https://localhost:{port}/good.json"):
        assert (await failure(negotiator, url)).code == "invalid_profile_url"
    assert Handler.hits["/good.json"] == 0


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.0.2.10", "shop.example.com"])
async def test_loopback_profiles_default_off_when_bound_beyond_loopback(port: str, host: str) -> None:
    negotiator = Negotiator(settings(host=host))
    for url in (f"http://127.0.0.1:{port}/good.json", f"https://localhost:{port}/good.json"):
        assert (await failure(negotiator, url)).code == "invalid_profile_url"
    assert Handler.hits["/good.json"] == 0


@pytest.mark.parametrize(
    ("host", "setting", "allowed"),
    [
        ("127.0.0.1", None, True),
        ("localhost", None, True),
        ("::1", None, True),
        ("127.0.0.2", None, True),
        ("0.0.0.0", None, False),
        ("0.0.0.0", True, True),
        ("127.0.0.1", False, False),
    ],
)
def test_loopback_profiles_follow_the_bind_address_unless_set(host: str, setting: bool | None, allowed: bool) -> None:
    assert settings(host=host, allow_http_loopback_profiles=setting).loopback_profiles_allowed is allowed


async def test_unresolvable_host_is_invalid_profile_url() -> None:
    err = await failure(Negotiator(settings()), "https://no-such-host.invalid/p.json")
    assert err.code == "invalid_profile_url"


# --- trust and caching ----------------------------------------------------------------------------------


async def test_trusted_profiles_are_not_fetched_and_get_our_highest_version(base: str) -> None:
    negotiator = Negotiator(settings(trust_profiles=True, supported_versions=[OLD, V]))
    assert await negotiator.negotiate(None) == Negotiated(V, None, {CAPABILITY: [V]})
    assert (await negotiator.negotiate(f"{base}/old.json")).version == V
    assert sum(Handler.hits.values()) == 0
    assert (await failure(negotiator, "ftp://x.example/p")).code == "invalid_profile_url"


async def test_successful_profile_is_cached_at_least_sixty_seconds(base: str) -> None:
    clock = Clock()
    negotiator = Negotiator(settings(profile_cache_s=5), clock=clock)  # below the 60 s floor
    url = f"{base}/good.json"
    await negotiator.negotiate(url)
    clock.now += 59
    await negotiator.negotiate(url)
    assert Handler.hits["/good.json"] == 1
    clock.now += 2
    await negotiator.negotiate(url)
    assert Handler.hits["/good.json"] == 2


async def test_failures_are_cached_briefly(base: str) -> None:
    clock = Clock()
    negotiator = Negotiator(settings(), clock=clock)
    for _ in range(3):
        assert (await failure(negotiator, f"{base}/missing")).code == "profile_unreachable"
    assert Handler.hits["/missing"] == 1
    clock.now += 11
    await failure(negotiator, f"{base}/missing")
    assert Handler.hits["/missing"] == 2


async def test_version_refusal_from_cache_still_refuses(base: str) -> None:
    negotiator = Negotiator(settings())
    first = await failure(negotiator, f"{base}/old.json")
    second = await failure(negotiator, f"{base}/old.json")
    assert first.code == second.code == "version_unsupported"
    assert first is not second
    assert Handler.hits["/old.json"] == 1


async def test_concurrent_requests_share_one_fetch(base: str) -> None:
    negotiator = Negotiator(settings())
    results = await asyncio.gather(*(negotiator.negotiate(f"{base}/good.json") for _ in range(20)))
    assert {r.version for r in results} == {V}
    assert Handler.hits["/good.json"] == 1


# --- HTTPS: the pinned connection still verifies the certificate against the hostname ---------------------


def _certificate(tmp: Path, name: str) -> tuple[Path, Path]:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = dt.datetime.now(dt.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(days=1))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(name)]), critical=False)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = tmp / f"{name}.crt", tmp / f"{name}.key"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return cert_path, key_path


@pytest.fixture(scope="module")
def tls_servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, tuple[str, Path]]]:
    """Two HTTPS servers on 127.0.0.1: one with a certificate for localhost, one for another name."""
    tmp = tmp_path_factory.mktemp("tls")
    out: dict[str, tuple[str, Path]] = {}
    servers = []
    for name in ("localhost", "elsewhere.example"):
        cert, key = _certificate(tmp, name)
        server = Server(("127.0.0.1", 0), Handler)
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(cert, key)
        server.socket = ctx.wrap_socket(server.socket, server_side=True)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        out[name] = (str(server.server_address[1]), cert)
    yield out
    for server in servers:
        server.shutdown()
        server.server_close()


async def test_https_profile_is_fetched_with_certificate_verified_for_the_hostname(
    tls_servers: dict[str, tuple[str, Path]],
) -> None:
    port, cert = tls_servers["localhost"]
    async with httpx.AsyncClient(verify=ssl.create_default_context(cafile=str(cert))) as client:
        result = await Negotiator(settings(), http_client=client).negotiate(f"https://localhost:{port}/good.json")
    assert result.version == V


async def test_https_profile_with_a_certificate_for_another_name_is_unreachable(
    tls_servers: dict[str, tuple[str, Path]],
) -> None:
    port, cert = tls_servers["elsewhere.example"]
    async with httpx.AsyncClient(verify=ssl.create_default_context(cafile=str(cert))) as client:
        err = await failure(Negotiator(settings(), http_client=client), f"https://localhost:{port}/good.json")
    assert err.code == "profile_unreachable"
