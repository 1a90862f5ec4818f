"""An independent RFC 9421 response verifier for the tests: built on `http-sf` (parsing and serialising the
structured fields) and `cryptography` (ES256), NOT on http-message-signatures, which the server signs with. It
builds the signature base itself (RFC 9421 §2.5) from what the client saw, so a bug in the signing library's base
construction shows up as a failed verification rather than agreeing with itself."""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import http_sf
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

# What UCP asks a response signature to cover (signatures.md, "REST Response Signing"), plus the request's
# authority and path (issue 12): a response replayed for another request must fail.
REQUIRED = {"@status", "@authority", "@path", "content-digest"}


class VerificationError(Exception):
    pass


@dataclass(frozen=True)
class Seen:
    """A response as a client received it, and the request it sent."""

    status: int
    headers: Mapping[str, str]  # case-insensitive lookups are done by the caller (httpx.Headers is)
    body: bytes
    authority: str  # host[:port] the request went to
    path: str  # the request path, without the query


def seen(response: Any) -> Seen:
    """A `Seen` from an httpx response."""
    url = urlsplit(str(response.request.url))
    return Seen(response.status_code, response.headers, response.content, url.netloc, url.path or "/")


def _b64url_int(text: str) -> int:
    return int.from_bytes(base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)), "big")


def _public_key(jwk: Mapping[str, str]) -> ec.EllipticCurvePublicKey:
    if jwk.get("kty") != "EC" or jwk.get("crv") != "P-256":
        raise VerificationError(f"key {jwk.get('kid')} is not an EC P-256 key")
    return ec.EllipticCurvePublicNumbers(_b64url_int(jwk["x"]), _b64url_int(jwk["y"]), ec.SECP256R1()).public_key()


def _authority(value: str) -> str:
    host, _, port = value.lower().rpartition(":")
    return host if port == "80" else value.lower()  # http default port is omitted (RFC 9421 §2.2.3)


def verify(response: Seen, jwks: Sequence[Mapping[str, str]], label: str = "sig1") -> str:
    """Verify the response's `label` signature against the published `jwks`; the kid that verified it."""
    try:
        inputs = http_sf.parse(response.headers["signature-input"].encode(), tltype="dictionary")
        signatures = http_sf.parse(response.headers["signature"].encode(), tltype="dictionary")
    except KeyError as exc:
        raise VerificationError(f"missing {exc}") from None
    assert isinstance(inputs, dict) and isinstance(signatures, dict)
    if label not in inputs or label not in signatures:
        raise VerificationError(f"no signature labelled {label}")
    components, params = inputs[label]
    signature, _ = signatures[label]
    if not isinstance(components, list) or not isinstance(signature, bytes):
        raise VerificationError("malformed Signature-Input or Signature")
    names = {name for name, _ in components}
    if not names >= REQUIRED:
        raise VerificationError(f"covers {sorted(names)}, not all of {sorted(REQUIRED)}")
    expected_digest = "sha-256=:" + base64.b64encode(hashlib.sha256(response.body).digest()).decode() + ":"
    if response.headers.get("content-digest") != expected_digest:
        raise VerificationError("Content-Digest does not match the body")

    lines = []
    for name, item_params in components:
        request_part = item_params.get("req") is True
        if name == "@status":
            value = str(response.status)
        elif name == "@authority" and request_part:
            value = _authority(response.authority)
        elif name == "@path" and request_part:
            value = response.path
        elif not name.startswith("@") and not item_params:
            if name not in response.headers:
                raise VerificationError(f"covered field {name} is absent")
            value = response.headers[name].strip()
        else:
            raise VerificationError(f"this verifier does not know component {name} {item_params}")
        lines.append(f"{http_sf.ser((name, item_params))}: {value}")
    signature_params = http_sf.ser({label: (components, params)})[len(label) + 1 :]
    lines.append(f'"@signature-params": {signature_params}')
    base = "\n".join(lines).encode("ascii")

    kid = params.get("keyid")
    key = next((k for k in jwks if k.get("kid") == kid), None)
    if key is None:
        raise VerificationError(f"keyid {kid} is not among the published keys")
    if len(signature) != 64:
        raise VerificationError("an ES256 signature is 64 bytes (r || s)")
    der = encode_dss_signature(int.from_bytes(signature[:32], "big"), int.from_bytes(signature[32:], "big"))
    try:
        _public_key(key).verify(der, base, ec.ECDSA(hashes.SHA256()))
    except InvalidSignature:
        raise VerificationError("the signature does not verify") from None
    return str(kid)
