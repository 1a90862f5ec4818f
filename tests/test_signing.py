"""Signed responses (RFC 9421, ES256) on a real server: every REST, HTTP-MCP and plain HTTP response (answers,
errors, 404s) verifies with an independent verifier (tests/rfc9421.py: http-sf + cryptography) against the keys
of /.well-known/ucp; a tampered body, status or path does not; rotation publishes two keys, one signing; `serve`
generates a development key on its first run and keeps it."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from ask_engine.config import Settings
from ask_engine.errors import ConfigError
from ask_engine.server.signing import ensure_dev_key, load_keys, thumbprint
from tests.rfc9421 import VerificationError, seen, verify
from tests.server_helpers import (
    AGENT_KEYS,
    JSONRPC_ACCEPT,
    KEY_A,
    RunningServer,
    assert_ask_response,
    mcp_client,
    serve,
    tools_call,
)

ROOT = Path(__file__).resolve().parents[1]
SHOP = "fjord-fell"


def write_key(path: Path, key: Any, *, public: bool = False) -> Path:
    if public:
        data = key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    else:
        data = key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    path.write_bytes(data)
    return path


@dataclasses.dataclass
class Signed:
    server: RunningServer
    signing_kid: str
    previous_kid: str

    def url(self, path: str) -> str:
        return self.server.base_url + path

    def jwks(self, prefix: str = "") -> list[dict[str, str]]:
        response = httpx.get(self.url(prefix + "/.well-known/ucp"), timeout=30)
        assert response.status_code == 200
        verify(seen(response), response.json()["keys"])  # the profile itself is signed with its own keys
        keys: list[dict[str, str]] = response.json()["keys"]
        return keys


@pytest.fixture(scope="module")
def signed(engine: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Signed]:
    """A server signing with a key file, also publishing the previous key (rotation), agent keys on."""
    from ask_engine.server.app import create_app

    folder = tmp_path_factory.mktemp("keys")
    current = ec.generate_private_key(ec.SECP256R1())
    previous = ec.generate_private_key(ec.SECP256R1())
    settings = Settings(
        agent_keys=AGENT_KEYS,
        trust_profiles=True,
        rate_limit_per_minute=100_000,
        rate_limit_per_hour=1_000_000,
        signing_key_file=str(write_key(folder / "current.pem", current)),
        published_key_files=[str(write_key(folder / "previous.pub.pem", previous, public=True))],
    )
    app = create_app(settings=settings, engines={SHOP: engine})
    with serve(app) as running:
        yield Signed(running, thumbprint(current.public_key()), thumbprint(previous.public_key()))


def ask_headers() -> dict[str, str]:
    return {**KEY_A, "UCP-Agent": 'profile="https://platform.example/profile.json"'}


def test_profile_publishes_two_keys_and_signs_with_the_first(signed: Signed) -> None:
    from tests.test_server_discovery import BUSINESS

    profile = httpx.get(signed.url("/.well-known/ucp"), timeout=30).json()
    assert [e.message for e in BUSINESS.iter_errors(profile)] == []
    assert [k["kid"] for k in profile["keys"]] == [signed.signing_kid, signed.previous_kid]
    assert all(k["alg"] == "ES256" and k["use"] == "sig" and "d" not in k for k in profile["keys"])
    response = httpx.post(
        signed.url("/api/ucp/v1/ask"), json={"query": "What is your return policy?"}, headers=ask_headers()
    )
    assert response.status_code == 200
    assert_ask_response(response.json())
    assert verify(seen(response), signed.jwks()) == signed.signing_kid
    # Not verifiable against the previous key alone: the signature is the current key's.
    previous_only = [k for k in signed.jwks() if k["kid"] == signed.previous_kid]
    with pytest.raises(VerificationError, match="not among"):
        verify(seen(response), previous_only)


def test_signature_covers_status_authority_path_digest_and_type(signed: Signed) -> None:
    response = httpx.post(signed.url("/api/ucp/v1/ask"), json={"query": "Do you ship abroad?"}, headers=ask_headers())
    signature_input = response.headers["signature-input"]
    assert signature_input.startswith('sig1=("@status" "@authority";req "@path";req "content-digest" "content-type");')
    assert re.search(r";created=\d+", signature_input) and ';keyid="' in signature_input
    assert "alg=" not in signature_input  # UCP: the algorithm follows from the key
    assert response.headers["content-digest"].startswith("sha-256=:")


def test_tampered_body_status_or_path_fails_verification(signed: Signed) -> None:
    response = httpx.post(
        signed.url("/api/ucp/v1/ask"), json={"query": "What is your return policy?"}, headers=ask_headers()
    )
    jwks = signed.jwks()
    good = seen(response)
    assert verify(good, jwks) == signed.signing_kid

    body = good.body.replace(b'"plain":"', b'"plain":"Free returns forever. ', 1)
    assert body != good.body
    with pytest.raises(VerificationError, match="Content-Digest"):
        verify(dataclasses.replace(good, body=body), jwks)
    # The body and a recomputed digest: now the signature, which covers the digest, fails.
    import base64
    import hashlib

    forged = dict(good.headers)
    forged["content-digest"] = "sha-256=:" + base64.b64encode(hashlib.sha256(body).digest()).decode() + ":"
    with pytest.raises(VerificationError, match="does not verify"):
        verify(dataclasses.replace(good, body=body, headers=forged), jwks)
    with pytest.raises(VerificationError, match="does not verify"):
        verify(dataclasses.replace(good, status=500), jwks)
    with pytest.raises(VerificationError, match="does not verify"):
        verify(dataclasses.replace(good, path="/shops/fjord-fell/api/ucp/v1/ask"), jwks)
    with pytest.raises(VerificationError, match="does not verify"):
        verify(dataclasses.replace(good, authority="evil.example"), jwks)


@pytest.mark.parametrize(
    ("method", "path", "kwargs", "status"),
    [
        ("POST", "/api/ucp/v1/ask", {"content": b"{", "headers": KEY_A}, 400),  # malformed JSON
        ("POST", "/api/ucp/v1/ask", {"json": {"query": "hi"}}, 401),  # no agent key
        ("GET", "/api/ucp/v1/ask", {}, 405),
        ("GET", "/no/such/path", {}, 404),
        ("GET", "/healthz", {}, 200),
        ("GET", "/openapi.json", {}, 200),
    ],
)
def test_errors_and_plain_routes_are_signed(
    signed: Signed, method: str, path: str, kwargs: dict[str, Any], status: int
) -> None:
    response = httpx.request(method, signed.url(path), timeout=30, **kwargs)
    assert response.status_code == status
    assert verify(seen(response), signed.jwks()) == signed.signing_kid


def test_head_request_is_signed_over_the_body_a_get_would_send(signed: Signed) -> None:
    get = httpx.get(signed.url("/.well-known/ucp"), timeout=30)
    head = httpx.head(signed.url("/.well-known/ucp"), timeout=30)
    assert head.status_code == 200 and head.content == b""
    assert head.headers["content-digest"] == get.headers["content-digest"]  # RFC 9530: the representation's digest
    # the independent verifier digests what it received (nothing), so it checks HEAD with the GET's body
    assert verify(dataclasses.replace(seen(head), body=get.content), signed.jwks()) == signed.signing_kid


@pytest.mark.parametrize("path", ["/ucp/mcp", "/mcp"])
def test_http_mcp_responses_are_signed(signed: Signed, path: str) -> None:
    arguments: dict[str, Any] = {"query": "What is your return policy?"}
    if path == "/ucp/mcp":
        arguments = {"meta": {"ucp-agent": {"profile": "https://platform.example/profile.json"}}, "ask": arguments}
    headers = {**JSONRPC_ACCEPT, **KEY_A}
    ok = httpx.post(signed.url(path), json=tools_call("ask_business", arguments), headers=headers, timeout=60)
    refused = httpx.post(signed.url(path), json=tools_call("ask_business", arguments), headers=JSONRPC_ACCEPT)
    assert ok.status_code == 200 and "result" in ok.json()
    assert refused.status_code == 403 and "error" in refused.json()
    for response in (ok, refused):
        assert verify(seen(response), signed.jwks()) == signed.signing_kid


def test_the_official_mcp_client_works_through_the_signing_layer(signed: Signed) -> None:
    async def run() -> Any:
        async with mcp_client(signed.url("/mcp"), KEY_A) as client:
            return await client.call_tool("ask_business", {"query": "What is your return policy?"})

    result = asyncio.run(run())
    assert result.is_error is False
    assert_ask_response(result.structured_content)


def test_per_shop_paths_are_signed_with_their_own_path(signed: Signed) -> None:
    response = httpx.post(
        signed.url(f"/shops/{SHOP}/api/ucp/v1/ask"), json={"query": "Do you ship abroad?"}, headers=ask_headers()
    )
    assert response.status_code == 200
    jwks = signed.jwks(f"/shops/{SHOP}")
    assert verify(seen(response), jwks) == signed.signing_kid
    with pytest.raises(VerificationError):
        verify(dataclasses.replace(seen(response), path="/api/ucp/v1/ask"), jwks)


# --- keys ------------------------------------------------------------------------------------------------------


def test_signing_key_from_the_setting_and_a_jwk_file_to_publish(tmp_path: Path) -> None:
    key = ec.generate_private_key(ec.SECP256R1())
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    other = ec.generate_private_key(ec.SECP256R1())
    numbers = other.public_key().public_numbers()
    jwk = {
        "kid": "business_2025",
        "kty": "EC",
        "crv": "P-256",
        "x": _b64(numbers.x.to_bytes(32, "big")),
        "y": _b64(numbers.y.to_bytes(32, "big")),
    }
    (tmp_path / "old.jwk.json").write_text(json.dumps(jwk))
    keys = load_keys(
        Settings(
            signing_key=pem.decode(), signing_key_id="shop-2026", published_key_files=[str(tmp_path / "old.jwk.json")]
        )
    )
    assert [k["kid"] for k in keys.jwks()] == ["shop-2026", "business_2025"]
    assert keys.jwks()[1]["x"] == jwk["x"] and keys.jwks()[1]["y"] == jwk["y"]


def _b64(data: bytes) -> str:
    import base64

    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def test_bad_key_settings_are_clear_config_errors(tmp_path: Path) -> None:
    rsa_key = write_key(tmp_path / "rsa.pem", rsa.generate_private_key(public_exponent=65537, key_size=2048))
    p384 = write_key(tmp_path / "p384.pem", ec.generate_private_key(ec.SECP384R1()))
    (tmp_path / "junk.pem").write_text("not a key")
    with pytest.raises(ConfigError, match="P-256"):
        load_keys(Settings(signing_key_file=str(rsa_key)))
    with pytest.raises(ConfigError, match="P-256"):
        load_keys(Settings(signing_key_file=str(p384)))
    with pytest.raises(ConfigError, match=r"junk\.pem"):
        load_keys(Settings(signing_key_file=str(tmp_path / "junk.pem")))
    with pytest.raises(ConfigError, match=r"missing\.pem"):
        load_keys(Settings(signing_key_file=str(tmp_path / "missing.pem")))
    with pytest.raises(ConfigError, match="not both"):
        load_keys(Settings(signing_key_file=str(p384), signing_key="x"))
    with pytest.raises(ConfigError, match="P-256"):
        load_keys(Settings(published_key_files=[str(rsa_key)]))


def test_dev_key_is_made_once_owner_only_and_then_kept(tmp_path: Path) -> None:
    path = tmp_path / "state" / "ask_engine" / "dev-signing-key.pem"
    assert ensure_dev_key(path) == path
    assert path.stat().st_mode & 0o777 == 0o600
    first = path.read_bytes()
    ensure_dev_key(path)
    assert path.read_bytes() == first


def test_serve_generates_a_dev_key_on_first_run_and_signs_with_it(sample_index: Path, tmp_path: Path) -> None:
    """`ask-engine serve` with no key configured: the key appears under XDG_STATE_HOME and signs what it serves."""
    state = tmp_path / "state"
    env = {**os.environ, "XDG_STATE_HOME": str(state), "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "ask_engine.cli", "serve", "--index", str(sample_index), "--port", "0"]
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert process.stdout is not None
        lines: list[str] = []
        deadline = time.monotonic() + 120
        while not any(line.startswith("Signatures:") for line in lines):
            line = process.stdout.readline()
            assert line or process.poll() is None, "serve exited:\n" + "".join(lines)
            assert time.monotonic() < deadline, "".join(lines)
            lines.append(line)
        text = "".join(lines)
        root = re.search(r"at (http://127\.0\.0\.1:\d+)", text)
        assert root is not None, text
        key_file = state / "ask_engine" / "dev-signing-key.pem"
        assert key_file.stat().st_mode & 0o777 == 0o600
        private = serialization.load_pem_private_key(key_file.read_bytes(), password=None)
        assert isinstance(private, ec.EllipticCurvePrivateKey)
        kid = thumbprint(private.public_key())
        assert f"keyid {kid}" in text
        deadline = time.monotonic() + 60
        while True:
            try:
                response = httpx.get(root.group(1) + "/.well-known/ucp", timeout=10)
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline
                time.sleep(0.2)
        assert [k["kid"] for k in response.json()["keys"]] == [kid]
        assert verify(seen(response), response.json()["keys"]) == kid
    finally:
        process.terminate()
        process.wait(timeout=30)
