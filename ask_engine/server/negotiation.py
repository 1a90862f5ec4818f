"""UCP negotiation: the platform profile named by a request → the protocol version and capabilities to answer with.

Follows the UCP overview ("Negotiation Protocol", "Version Selection", "Profile Hosting — Fetching"):

- The platform's profile `ucp.version` selects the protocol version; it must be one this business supports
  (exact match), else `version_unsupported`. The business never picks another version for it.
- Capabilities are intersected by exact version equality, highest common version wins. At protocol version D
  this business offers `dev.ucp.common.ask` version D (a release's `dev.ucp.*` entries carry the release date),
  so the platform must list D for the ask capability, else `capabilities_incompatible`.
- Profiles are fetched over HTTPS only (plain HTTP only to loopback when the setting allows it), without
  following redirects, with a timeout and a size cap, and cached at least 60 s; failures are cached briefly.
- SSRF: the host is resolved first and every address must be public (RFC 6890 special-use ranges — private,
  link-local incl. 169.254.169.254, shared, reserved, multicast — are refused; loopback only when loopback
  profiles are allowed). The connection then goes to the checked address (the hostname kept for `Host` and
  TLS SNI/certificate checks), so a DNS answer that changes between check and connect cannot redirect it.
- Leniency: only what negotiation reads must be well formed (`ucp.version`, the ask capability's entries and
  their `version`); missing `spec`/`schema`, `services` or `payment_handlers` are accepted.
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import re
import socket
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import urlsplit

import http_sf

from ask_engine.config import Settings
from ask_engine.errors import NegotiationError
from ask_engine.models import CAPABILITY

if TYPE_CHECKING:
    import httpx

_MIN_CACHE_S = 60.0  # the spec's TTL floor for profiles
_FAILURE_CACHE_S = 10.0  # long enough that a dead profile host is not hammered, short enough to recover
_CACHE_ENTRIES = 1024  # fixed-size cache: memory stays bounded whatever the number of profile URLs
_MAX_URL_CHARS = 2048
_MAX_ADDRESSES_TRIED = 3
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


@dataclass(frozen=True)
class Negotiated:
    """The outcome of negotiation for one request."""

    version: str  # protocol version to answer with
    profile_url: str | None  # the platform profile it was negotiated against (None: trusted, none given)
    capabilities: dict[str, list[str]] = field(default_factory=dict)  # capability → selected version(s)

    def envelope(self, status: Literal["success", "error"] | None = None) -> dict[str, Any]:
        """The response's `ucp` object: {version, capabilities: {name: [{"version": v}]}, status?}."""
        env: dict[str, Any] = {
            "version": self.version,
            "capabilities": {name: [{"version": v} for v in versions] for name, versions in self.capabilities.items()},
        }
        if status is not None:
            env["status"] = status
        return env


@dataclass(frozen=True)
class _Profile:
    """What negotiation needs from a fetched platform profile."""

    version: str
    capabilities: dict[str, tuple[str, ...]]  # capability name → advertised versions


def parse_ucp_agent_header(value: str | None) -> str | None:
    """The `profile` member of a `UCP-Agent` header (an RFC 8941 Dictionary); None when absent.

    Raises NegotiationError(invalid_profile_url) when the header is not a valid Dictionary or `profile` is not
    a String.
    """
    if value is None or not value.strip():
        return None
    try:
        parsed = http_sf.parse(value.encode("ascii"), tltype="dictionary")
    except (UnicodeEncodeError, http_sf.StructuredFieldError) as exc:
        raise NegotiationError(
            "invalid_profile_url", f"UCP-Agent is not a valid structured-field dictionary: {exc}"
        ) from None
    if not isinstance(parsed, dict) or "profile" not in parsed:
        return None
    member = parsed["profile"]
    item = member[0] if isinstance(member, tuple) else member
    if type(item) is not str:  # Token, Boolean, inner list... are not a quoted String
        raise NegotiationError(
            "invalid_profile_url", 'UCP-Agent profile must be a quoted string: profile="https://..."'
        )
    return item


def _version_key(version: str) -> tuple[int, str]:
    # Dated releases order by date; anything else (e.g. "draft") below every date.
    return (1, version) if _DATE.match(version) else (0, version)


def intersect(business: dict[str, list[str]], platform: dict[str, tuple[str, ...]]) -> dict[str, list[str]]:
    """The capability intersection algorithm: per capability, the highest version both sides list exactly."""
    out: dict[str, list[str]] = {}
    for name, ours in business.items():
        common = set(ours) & set(platform.get(name, ()))
        if common:
            out[name] = [max(common, key=_version_key)]
    return out


class Negotiator:
    """Resolves, fetches, caches and checks platform profiles."""

    def __init__(
        self,
        settings: Settings,
        *,
        http_client: httpx.AsyncClient | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._settings = settings
        self._client = http_client
        self._clock = clock
        self._success_ttl = max(_MIN_CACHE_S, float(settings.profile_cache_s))
        self._failure_ttl = min(_FAILURE_CACHE_S, self._success_ttl)
        self._cache: OrderedDict[str, tuple[float, _Profile | NegotiationError]] = OrderedDict()
        self._inflight: dict[str, asyncio.Task[_Profile]] = {}

    def business_versions(self) -> list[str]:
        """Protocol versions this business supports, newest first."""
        versions = {*self._settings.supported_versions, self._settings.ucp_version}
        return sorted(versions, key=_version_key, reverse=True)

    def _offer(
        self, version: str, capability: str = CAPABILITY, extensions: Mapping[str, str] | None = None
    ) -> dict[str, list[str]]:
        # A release's dev.ucp.* entries carry the release date; older versions come from their own leaf profile.
        # The project's own extensions carry their own version.
        return {capability: [version], **{name: [v] for name, v in (extensions or {}).items()}}

    async def negotiate(
        self, profile_url: str | None, capability: str = CAPABILITY, extensions: Mapping[str, str] | None = None
    ) -> Negotiated:
        """Negotiate `capability` (and the optional `extensions`, name → version, active only when the platform
        declares them) with the platform profile at `profile_url`; raises NegotiationError."""
        trusted = self._settings.trust_profiles
        if profile_url is None or not profile_url.strip():
            if trusted:
                return self._trusted(None)
            raise NegotiationError(
                "invalid_profile_url",
                'The platform profile URL is missing: send UCP-Agent: profile="https://..." '
                '(MCP: meta["ucp-agent"].profile).',
            )
        url = self._check_url(profile_url.strip(), fetching=not trusted)
        if trusted:
            return self._trusted(url, capability)
        profile = await self._profile(url)
        if profile.version not in self.business_versions():
            raise NegotiationError(
                "version_unsupported",
                f"Protocol version {profile.version} is not supported. "
                f"This business supports {_spoken(self.business_versions())}.",
            )
        active = intersect(self._offer(profile.version, capability, extensions), profile.capabilities)
        if capability not in active:
            advertised = list(profile.capabilities.get(capability, ()))
            raise NegotiationError(
                "capabilities_incompatible",
                f"No compatible capabilities in the intersection: the platform profile lists {_spoken(advertised)} of "
                f"{capability}; at protocol version {profile.version} this business offers version {profile.version}.",
                version=profile.version,
            )
        return Negotiated(version=profile.version, profile_url=url, capabilities=active)

    def _trusted(self, url: str | None, capability: str = CAPABILITY) -> Negotiated:
        # Nothing was fetched, so no optional extension is known to be declared: only the capability itself.
        version = self.business_versions()[0]
        return Negotiated(version=version, profile_url=url, capabilities=self._offer(version, capability))

    # --- URL policy ---------------------------------------------------------------------------------------

    def _check_url(self, url: str, *, fetching: bool) -> str:
        def bad(why: str) -> NegotiationError:
            return NegotiationError("invalid_profile_url", f"Invalid platform profile URL: {why}.")

        if len(url) > _MAX_URL_CHARS:
            raise bad(f"longer than {_MAX_URL_CHARS} characters")
        if any(c.isspace() or ord(c) < 0x20 for c in url):
            raise bad("it contains whitespace or control characters")
        try:
            parts = urlsplit(url)
            port = parts.port
        except ValueError as exc:
            raise bad(str(exc)) from None
        scheme, host = parts.scheme.lower(), parts.hostname
        if scheme not in ("https", "http") or not host:
            raise bad("it must be an absolute https URL")
        if parts.username is not None or parts.password is not None:
            raise bad("it must not carry credentials")
        if port == 0:
            raise bad("port 0")
        if scheme == "http" and fetching and not (self._settings.loopback_profiles_allowed and _is_loopback_name(host)):
            raise bad("it must use https (plain http is accepted only for loopback hosts in development)")
        return parts._replace(fragment="").geturl()

    async def _addresses(self, host: str, port: int) -> list[str]:
        """The host's addresses, each checked against the special-use ranges."""
        try:
            infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except (OSError, UnicodeError) as exc:
            raise NegotiationError(
                "invalid_profile_url", f"Invalid platform profile URL: its host could not be resolved ({exc})."
            ) from None
        addresses: list[str] = []
        for *_, sockaddr in infos:
            address = str(sockaddr[0]).split("%", 1)[0]
            if not self._address_allowed(address):
                raise NegotiationError(
                    "invalid_profile_url",
                    "Invalid platform profile URL: its host resolves to a private, loopback or otherwise "
                    "special-use address.",
                )
            if address not in addresses:
                addresses.append(address)
        if not addresses:
            raise NegotiationError("invalid_profile_url", "Invalid platform profile URL: its host has no address.")
        return addresses

    def _address_allowed(self, address: str) -> bool:
        ip: ipaddress.IPv4Address | ipaddress.IPv6Address = ipaddress.ip_address(address)
        if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
            ip = ip.ipv4_mapped
        if ip.is_loopback:
            return self._settings.loopback_profiles_allowed
        return ip.is_global and not ip.is_multicast

    # --- fetching and caching -----------------------------------------------------------------------------

    async def _profile(self, url: str) -> _Profile:
        now = self._clock()
        hit = self._cache.get(url)
        if hit is not None and hit[0] > now:
            self._cache.move_to_end(url)
            if isinstance(hit[1], NegotiationError):
                raise hit[1].copy()
            return hit[1]
        # Single flight: concurrent requests naming the same profile share one fetch.
        loop = asyncio.get_running_loop()
        task = self._inflight.get(url)
        if task is None or task.get_loop() is not loop:
            task = loop.create_task(self._fetch_and_cache(url))
            self._inflight[url] = task

            def done(t: asyncio.Task[_Profile], url: str = url) -> None:
                if self._inflight.get(url) is t:
                    del self._inflight[url]
                if not t.cancelled():
                    t.exception()  # retrieved here so an abandoned fetch's failure is not reported as unhandled

            task.add_done_callback(done)
        try:
            # shield: a cancelled request does not cancel the fetch other requests wait for
            return await asyncio.shield(task)
        except NegotiationError as exc:
            raise exc.copy() from None

    async def _fetch_and_cache(self, url: str) -> _Profile:
        try:
            async with asyncio.timeout(self._settings.profile_timeout_s):
                profile = await self._fetch(url)
        except NegotiationError as exc:
            self._remember(url, exc, self._failure_ttl)
            raise
        except TimeoutError:
            timed_out = NegotiationError(
                "profile_unreachable",
                f"Unable to fetch the platform profile: no complete answer within {self._settings.profile_timeout_s:g} s.",
            )
            self._remember(url, timed_out, self._failure_ttl)
            raise timed_out from None
        self._remember(url, profile, self._success_ttl)
        return profile

    def _remember(self, url: str, value: _Profile | NegotiationError, ttl: float) -> None:
        self._cache[url] = (self._clock() + ttl, value)
        self._cache.move_to_end(url)
        while len(self._cache) > _CACHE_ENTRIES:
            self._cache.popitem(last=False)

    async def _fetch(self, url: str) -> _Profile:
        import httpx

        parts = urlsplit(url)
        host = parts.hostname or ""
        https = parts.scheme.lower() == "https"
        port = parts.port or (443 if https else 80)
        addresses = await self._addresses(host, port)
        target = httpx.URL(url)
        host_header = target.netloc.decode("ascii")
        last_error: Exception | None = None
        for address in addresses[:_MAX_ADDRESSES_TRIED]:
            try:
                return await self._get(target.copy_with(host=address), host_header, host if https else None)
            except httpx.ConnectError as exc:  # try the host's next address
                last_error = exc
            except httpx.TimeoutException:
                raise NegotiationError(
                    "profile_unreachable", "Unable to fetch the platform profile: timed out."
                ) from None
            except httpx.HTTPError as exc:
                raise NegotiationError(
                    "profile_unreachable", f"Unable to fetch the platform profile: {type(exc).__name__}."
                ) from None
        raise NegotiationError(
            "profile_unreachable",
            f"Unable to fetch the platform profile: connection failed ({type(last_error).__name__}).",
        )

    async def _get(self, pinned: httpx.URL, host_header: str, sni: str | None) -> _Profile:
        import httpx

        own = self._client is None
        client = self._client or httpx.AsyncClient(trust_env=False)
        try:
            async with client.stream(
                "GET",
                pinned,
                headers={"Host": host_header, "Accept": "application/json", "User-Agent": "ask-engine"},
                follow_redirects=False,
                timeout=self._settings.profile_timeout_s,
                extensions={"sni_hostname": sni} if sni else None,
            ) as response:
                if response.is_redirect:
                    raise NegotiationError(
                        "profile_unreachable",
                        f"The platform profile answered with a redirect (HTTP {response.status_code}); "
                        "redirects are not followed.",
                    )
                if response.status_code != 200:
                    raise NegotiationError(
                        "profile_unreachable", f"Unable to fetch the platform profile: HTTP {response.status_code}."
                    )
                body = await _read_capped(response, self._settings.profile_max_bytes)
        finally:
            if own:
                await client.aclose()
        return _parse_profile(body)


async def _read_capped(response: httpx.Response, limit: int) -> bytes:
    from ask_engine.server.streams import read_capped

    too_big = NegotiationError("profile_malformed", f"The platform profile is larger than {limit} bytes.")
    return await read_capped(response.aiter_bytes(), response.headers.get("content-length"), limit, too_big)


def _parse_profile(body: bytes) -> _Profile:
    def malformed(why: str) -> NegotiationError:
        return NegotiationError("profile_malformed", f"The platform profile is malformed: {why}.")

    try:
        doc = json.loads(body)
    except (ValueError, RecursionError):
        raise malformed("not JSON") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("ucp"), dict):
        raise malformed("no `ucp` object")
    ucp = doc["ucp"]
    version = ucp.get("version")
    if not isinstance(version, str) or not version:
        raise malformed("`ucp.version` is missing or not a string")
    raw = ucp.get("capabilities", {})
    capabilities: dict[str, tuple[str, ...]] = {}
    if isinstance(raw, dict):
        entries = raw.get(CAPABILITY, [])
        if not isinstance(entries, list):
            raise malformed(f"`ucp.capabilities.{CAPABILITY}` is not an array")
        capabilities[CAPABILITY] = _versions(entries, malformed)
        # Every other capability is read leniently: an entry without a version string is skipped, not refused.
        for name, others in raw.items():
            if name != CAPABILITY and isinstance(name, str) and isinstance(others, list):
                capabilities[name] = tuple(
                    e["version"] for e in others if isinstance(e, dict) and isinstance(e.get("version"), str)
                )
    elif isinstance(raw, list):
        # Pre-registry profiles listed capabilities as [{"name", "version"}]; read them rather than refuse.
        capabilities[CAPABILITY] = _versions(
            [e for e in raw if isinstance(e, dict) and e.get("name") == CAPABILITY], malformed
        )
    else:
        raise malformed("`ucp.capabilities` is not an object")
    return _Profile(version=version, capabilities=capabilities)


def _versions(entries: list[Any], malformed: Callable[[str], NegotiationError]) -> tuple[str, ...]:
    versions: list[str] = []
    for entry in entries:
        if not isinstance(entry, dict) or not isinstance(entry.get("version"), str):
            raise malformed(f"an entry of `{CAPABILITY}` has no `version` string")
        versions.append(entry["version"])
    return tuple(versions)


def _is_loopback_name(host: str) -> bool:
    host = host.lower().rstrip(".")
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _spoken(versions: list[str]) -> str:
    if not versions:
        return "no version"
    if len(versions) == 1:
        return f"version {versions[0]}"
    return "versions " + ", ".join(versions[:-1]) + f" and {versions[-1]}"
