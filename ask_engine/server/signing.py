"""Signed responses (RFC 9421, ES256): the signing key and the published keys (JWK, for `/.well-known/ucp`), and
the ASGI middleware that signs every HTTP response over the exact bytes it sends, with a Content-Digest (RFC 9530).

Covered components: `"@status" "@authority";req "@path";req "content-digest" "content-type"`. RFC 9421 §2.4
names the request's authority and path in a response signature with the `req` flag (a response has no authority
or path of its own); `content-type` is covered whenever the response has one. Responses are buffered whole before
their headers go out, since the digest needs every byte; a `text/event-stream` response (none of this server's
bindings streams: MCP answers with JSON, A2A declares no streaming) is passed through unsigned rather than held
back until it ends.
"""

from __future__ import annotations

import base64
import hashlib
import json
import logging
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlsplit

from ask_engine.config import Settings
from ask_engine.errors import ConfigError

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric import ec
    from starlette.types import ASGIApp, Message, Receive, Scope, Send

logger = logging.getLogger("ask_engine.server")

LABEL = "sig1"
COVERED: tuple[str, ...] = ('"@status"', '"@authority";req', '"@path";req', '"content-digest"')
_CONTENT_TYPE = '"content-type"'


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


@dataclass(frozen=True)
class PublishedKey:
    """One EC P-256 key as the profile publishes it; `private` is set only for the key that signs."""

    kid: str
    public: ec.EllipticCurvePublicKey
    private: ec.EllipticCurvePrivateKey | None = None

    def jwk(self) -> dict[str, str]:
        """The public JWK (RFC 7517/7518), as UCP's `keys[]` lists it."""
        return {"kid": self.kid, **_public_members(self.public), "use": "sig", "alg": "ES256"}


@dataclass(frozen=True)
class KeySet:
    """The key that signs and every key published (the signing key first)."""

    signing: PublishedKey
    others: tuple[PublishedKey, ...] = ()

    def jwks(self) -> list[dict[str, str]]:
        return [key.jwk() for key in (self.signing, *self.others)]


def _public_members(public: ec.EllipticCurvePublicKey) -> dict[str, str]:
    numbers = public.public_numbers()
    return {
        "kty": "EC",
        "crv": "P-256",
        "x": _b64url(numbers.x.to_bytes(32, "big")),
        "y": _b64url(numbers.y.to_bytes(32, "big")),
    }


def thumbprint(public: ec.EllipticCurvePublicKey) -> str:
    """The RFC 7638 JWK SHA-256 thumbprint: the required members, sorted, no whitespace."""
    members = _public_members(public)
    canonical = json.dumps({k: members[k] for k in ("crv", "kty", "x", "y")}, separators=(",", ":"))
    return _b64url(hashlib.sha256(canonical.encode("ascii")).digest())


def _p256(key: Any, where: str) -> None:
    from cryptography.hazmat.primitives.asymmetric import ec

    curve = getattr(key, "curve", None)
    if not isinstance(key, ec.EllipticCurvePrivateKey | ec.EllipticCurvePublicKey) or not isinstance(
        curve, ec.SECP256R1
    ):
        raise ConfigError(f"{where}: responses are signed with ES256, which needs an EC P-256 key")


def private_key_from_pem(pem: bytes, where: str) -> ec.EllipticCurvePrivateKey:
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.hazmat.primitives.serialization import load_pem_private_key

    try:
        key = load_pem_private_key(pem, password=None)
    except (ValueError, TypeError) as exc:
        raise ConfigError(f"{where}: not an unencrypted PEM private key ({exc})") from None
    _p256(key, where)
    assert isinstance(key, ec.EllipticCurvePrivateKey)
    return key


def _published_key(path: Path) -> PublishedKey:
    """A key to publish from a PEM (private or public) or JWK JSON file."""
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.hazmat.primitives.serialization import load_pem_public_key

    where = str(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"{where}: {exc.strerror or exc}") from None
    if raw.lstrip().startswith(b"{"):
        try:
            jwk = json.loads(raw)
            if jwk.get("kty") != "EC" or jwk.get("crv") != "P-256":
                raise ConfigError(f"{where}: responses are signed with ES256, which needs an EC P-256 key")
            x, y = (int.from_bytes(base64.urlsafe_b64decode(jwk[k] + "=" * (-len(jwk[k]) % 4)), "big") for k in "xy")
            public = ec.EllipticCurvePublicNumbers(x, y, ec.SECP256R1()).public_key()
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise ConfigError(f"{where}: not an EC P-256 JWK ({exc})") from None
        kid = jwk.get("kid")
        return PublishedKey(kid if isinstance(kid, str) and kid else thumbprint(public), public)
    if b"PRIVATE KEY" in raw:
        public = private_key_from_pem(raw, where).public_key()
    else:
        try:
            loaded = load_pem_public_key(raw)
        except (ValueError, TypeError) as exc:
            raise ConfigError(f"{where}: not a PEM public key, private key or JWK ({exc})") from None
        _p256(loaded, where)
        assert isinstance(loaded, ec.EllipticCurvePublicKey)
        public = loaded
    return PublishedKey(thumbprint(public), public)


def generate_key() -> ec.EllipticCurvePrivateKey:
    from cryptography.hazmat.primitives.asymmetric import ec

    return ec.generate_private_key(ec.SECP256R1())


def ensure_dev_key(path: Path) -> Path:
    """The development key at `path`, generated (owner-only, 0600) when it does not exist yet."""
    from cryptography.hazmat.primitives import serialization

    if path.exists():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    pem = generate_key().private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as out:
        out.write(pem)
    logger.warning("generated a development signing key at %s (set signing_key_file for production)", path)
    return path


def load_keys(settings: Settings) -> KeySet:
    """The signing key from `signing_key_file` or `signing_key` (else a key for this process only), and the
    keys of `published_key_files` published beside it."""
    if settings.signing_key_file and settings.signing_key:
        raise ConfigError("set signing_key_file or signing_key, not both")
    if settings.signing_key_file:
        path = Path(settings.signing_key_file)
        try:
            pem = path.read_bytes()
        except OSError as exc:
            raise ConfigError(f"signing_key_file {path}: {exc.strerror or exc}") from None
        private = private_key_from_pem(pem, f"signing_key_file {path}")
    elif settings.signing_key:
        private = private_key_from_pem(settings.signing_key.encode("utf-8"), "signing_key")
    else:
        logger.warning("no signing key configured: signing with a key generated for this process only")
        private = generate_key()
    public = private.public_key()
    signing = PublishedKey(settings.signing_key_id or thumbprint(public), public, private)
    others: list[PublishedKey] = []
    for name in settings.published_key_files:
        key = _published_key(Path(name))
        if key.public.public_numbers() == public.public_numbers():
            continue  # the signing key itself, listed again
        if key.kid in {signing.kid, *(o.kid for o in others)}:
            raise ConfigError(f"{name}: kid {key.kid!r} is already published by another key")
        others.append(key)
    return KeySet(signing, tuple(others))


# --- signing ------------------------------------------------------------------------------------------------


@dataclass
class _Request:
    method: str
    url: str
    headers: dict[str, str]


@dataclass
class _Response:
    """The message view http-message-signatures reads: status, headers, and the request it answers."""

    status_code: int
    headers: dict[str, str]
    request: _Request


def _request_url(scope: Scope, public_base_url: str | None) -> str:
    """The request's absolute URL as the client addressed it (or as advertised behind a proxy)."""
    raw = scope.get("raw_path")
    path = raw.decode("latin-1") if isinstance(raw, bytes) and raw else quote(scope.get("path") or "/")
    query = scope.get("query_string") or b""
    suffix = "?" + query.decode("latin-1") if query else ""
    if public_base_url:
        base = urlsplit(public_base_url)
        return f"{base.scheme}://{base.netloc}{path}{suffix}"
    host = next((v.decode("latin-1") for k, v in scope.get("headers", []) if k == b"host"), None)
    if not host:
        server = scope.get("server") or ("localhost", None)
        host = f"{server[0]}:{server[1]}" if server[1] else str(server[0])
    return f"{scope.get('scheme', 'http')}://{host}{path}{suffix}"


class Signer:
    """Signs one response at a time with the key set's signing key (http-message-signatures, ES256)."""

    def __init__(self, keys: KeySet) -> None:
        from http_message_signatures import HTTPMessageSigner, MappingKeyResolver, algorithms

        self.keys = keys
        private = keys.signing.private
        assert private is not None
        resolver = MappingKeyResolver(public_keys={}, private_keys={keys.signing.kid: private})
        self._signer = HTTPMessageSigner(signature_algorithm=algorithms.ECDSA_P256_SHA256, key_resolver=resolver)

    def headers(
        self, status: int, headers: Iterable[tuple[bytes, bytes]], body: bytes, url: str, method: str
    ) -> list[tuple[bytes, bytes]]:
        """The Content-Digest, Signature-Input and Signature headers for this response."""
        content_type = next((v.decode("latin-1") for k, v in headers if k.lower() == b"content-type"), None)
        fields: dict[str, str] = {} if content_type is None else {"Content-Type": content_type}
        response = _Response(status, fields, _Request(method, url, {}))
        covered: Sequence[str] = COVERED if content_type is None else (*COVERED, _CONTENT_TYPE)
        self._signer.sign(
            response,
            key_id=self.keys.signing.kid,
            label=LABEL,
            include_alg=False,  # UCP: the algorithm follows from the key, never from Signature-Input
            covered_component_ids=covered,
            body=body,
        )
        added = ("Content-Digest", "Signature-Input", "Signature")
        return [(name.lower().encode("latin-1"), fields[name].encode("latin-1")) for name in added]


_REPLACED = (b"content-digest", b"signature-input", b"signature")


class SigningMiddleware:
    """ASGI middleware: every HTTP response leaves signed, over the exact bytes of its body."""

    def __init__(self, app: ASGIApp, signer: Signer, base: str | None = None) -> None:
        self.app = app
        self.signer = signer
        self.public_base_url = base  # settings.public_base_url: the authority clients address, behind a proxy

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start: Message | None = None
        streaming = False
        chunks: list[bytes] = []
        sent = False

        async def buffered(message: Message) -> None:
            nonlocal start, streaming, sent
            kind = message["type"]
            if kind == "http.response.start":
                start = message
                streaming = any(
                    k.lower() == b"content-type" and v.lower().startswith(b"text/event-stream")
                    for k, v in message.get("headers", [])
                )
                if streaming:
                    sent = True
                    await send(message)
                return
            if kind != "http.response.body" or streaming or start is None:
                await send(message)
                return
            chunks.append(message.get("body", b""))
            if message.get("more_body", False):
                return
            sent = True
            await self._send_signed(scope, start, b"".join(chunks), send)

        try:
            await self.app(scope, receive, buffered)
        except Exception:
            if not sent:  # nothing went out yet: a signed 500 rather than a bare connection reset
                failed: Message = {
                    "type": "http.response.start",
                    "status": 500,
                    "headers": [(b"content-type", b"text/plain; charset=utf-8")],
                }
                await self._send_signed(scope, failed, b"Internal Server Error", send)
            raise

    async def _send_signed(self, scope: Scope, start: Message, body: bytes, send: Send) -> None:
        status = int(start["status"])
        headers = [(k, v) for k, v in start.get("headers", []) if k.lower() not in _REPLACED]
        try:
            url = _request_url(scope, self.public_base_url)
            signed = self.signer.headers(status, headers, body, url, str(scope.get("method") or "GET"))
        except Exception as exc:  # a request URL the signer can't read (odd Host): answer unsigned, never crash
            logger.warning("response to %s left unsigned: %s", scope.get("path"), exc)
            signed = []
        # The body goes out whole, so a response that was to be chunked now states its length (not where HTTP
        # forbids a length: 1xx, 204 and 304).
        if status >= 200 and status not in (204, 304) and not any(k.lower() == b"content-length" for k, _ in headers):
            headers.append((b"content-length", str(len(body)).encode("ascii")))
        headers += signed
        await send({**start, "headers": headers})
        await send({"type": "http.response.body", "body": body, "more_body": False})
