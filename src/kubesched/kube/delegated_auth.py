"""Delegated authentication and authorization of the scheduler's own endpoints, as kube-scheduler's.

kube-scheduler serves ``/metrics`` and the health checks on its secure port behind the generic API
server's delegating filters (k8s.io/apiserver/pkg/server/options/authentication.go and
authorization.go); this module does the same, in the same order:

* **Authentication.** A client certificate signed by ``--client-ca-file`` (user = CN, groups = O);
  else a bearer token, checked by a ``TokenReview`` on the API server (results cached 10 s,
  ``CacheTTL``); else the anonymous user ``system:anonymous`` (group ``system:unauthenticated``).
  A token the API server rejects is 401, never anonymous (the bearer-token authenticator's
  "invalid bearer token").
* **Authorization.** The ``system:masters`` group and ``--authorization-always-allow-paths``
  (default ``/healthz,/readyz,/livez``; a trailing ``*`` is a prefix) are allowed without asking;
  everything else is a ``SubjectAccessReview`` for the non-resource path and the lower-cased HTTP
  verb (allowed and denied answers cached 10 s each). Without a client for the API server only
  those two are allowed, as upstream without an ``--authorization-kubeconfig``.

Tokens are never logged, and the caches key tokens by their SHA-256 only.
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

log = logging.getLogger("kubesched.kube.auth")

ANONYMOUS_USER = "system:anonymous"
UNAUTHENTICATED_GROUP = "system:unauthenticated"
AUTHENTICATED_GROUP = "system:authenticated"
#: DelegatingAuthorizationOptions.AlwaysAllowGroups.
PRIVILEGED_GROUPS = ("system:masters",)
#: kube-scheduler's --authorization-always-allow-paths default.
DEFAULT_ALWAYS_ALLOW_PATHS = ("/healthz", "/readyz", "/livez")
#: DelegatingAuthenticationOptions.CacheTTL; DelegatingAuthorizationOptions.AllowCacheTTL/DenyCacheTTL.
CACHE_TTL = 10.0
#: Entries kept in each cache at most: a flood of distinct tokens cannot grow memory without bound.
CACHE_MAX_ENTRIES = 4096

StartResponse = Callable[..., Any]
WSGIApp = Callable[[dict[str, Any], StartResponse], Iterable[bytes]]


class ReviewClient(Protocol):
    """What the filters need of the API server: one POST (``KubeClient.post``)."""

    def post(self, path: str, body: Any) -> Any: ...


@dataclass(frozen=True)
class UserInfo:
    name: str
    uid: str = ""
    groups: tuple[str, ...] = ()
    extra: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


ANONYMOUS = UserInfo(ANONYMOUS_USER, groups=(UNAUTHENTICATED_GROUP,))


class Unauthenticated(Exception):
    """The request carried credentials that do not authenticate (401)."""


class _TTLCache:
    """A small thread-safe cache with one TTL and a size bound (oldest entries dropped first)."""

    def __init__(self, ttl: float, clock: Callable[[], float]) -> None:
        self.ttl = ttl
        self.clock = clock
        self._items: dict[Any, tuple[float, Any]] = {}
        self._lock = threading.Lock()

    def get(self, key: Any) -> tuple[bool, Any]:
        with self._lock:
            hit = self._items.get(key)
            if hit is None or hit[0] <= self.clock():
                self._items.pop(key, None)
                return False, None
            return True, hit[1]

    def put(self, key: Any, value: Any) -> None:
        if self.ttl <= 0:
            return
        with self._lock:
            if len(self._items) >= CACHE_MAX_ENTRIES:
                now = self.clock()
                for k in [k for k, (exp, _) in self._items.items() if exp <= now]:
                    del self._items[k]
                while len(self._items) >= CACHE_MAX_ENTRIES:
                    del self._items[next(iter(self._items))]
            self._items[key] = (self.clock() + self.ttl, value)


def _strings(value: Any) -> tuple[str, ...]:
    return tuple(str(v) for v in value) if isinstance(value, list) else ()


def _user_from_review(user: Any) -> UserInfo:
    u = user if isinstance(user, Mapping) else {}
    extra_raw = u.get("extra")
    extra = {str(k): _strings(v) for k, v in extra_raw.items()} if isinstance(extra_raw, Mapping) else {}
    return UserInfo(str(u.get("username") or ""), str(u.get("uid") or ""), _strings(u.get("groups")), extra)


def _subject_names(subject: Any) -> tuple[str, list[str]]:
    """CN and the O values of an ``ssl.getpeercert()`` subject (the x509 authenticator's user)."""
    cn = ""
    orgs: list[str] = []
    for rdn in subject or ():
        for key, value in rdn:
            if key == "commonName":
                cn = str(value)
            elif key == "organizationName":
                orgs.append(str(value))
    return cn, orgs


class DelegatedAuthenticator:
    def __init__(
        self,
        client: ReviewClient | None,
        *,
        anonymous: bool = True,
        cache_ttl: float = CACHE_TTL,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.client = client
        self.anonymous = anonymous
        self._cache = _TTLCache(cache_ttl, clock)

    def authenticate(self, environ: Mapping[str, Any]) -> UserInfo:
        peer = environ.get("kubesched.peercert")
        if peer:
            cn, orgs = _subject_names(peer.get("subject"))
            if cn:
                return UserInfo(cn, groups=(*orgs, AUTHENTICATED_GROUP))
        header = str(environ.get("HTTP_AUTHORIZATION") or "")
        scheme, _, token = header.partition(" ")
        token = token.strip()
        if header and scheme.lower() == "bearer" and token and self.client is not None:
            # Without a TokenReview client upstream has no token authenticator: the header is not
            # looked at and the request goes on as anonymous.
            return self._token(token)
        if self.anonymous:
            return ANONYMOUS
        raise Unauthenticated("no credentials")

    def _token(self, token: str) -> UserInfo:
        key = hashlib.sha256(token.encode()).hexdigest()
        hit, cached = self._cache.get(key)
        if hit:
            if cached is None:
                raise Unauthenticated("invalid bearer token")
            assert isinstance(cached, UserInfo)
            return cached
        assert self.client is not None
        body = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": {"token": token}}
        try:
            answer = self.client.post("/apis/authentication.k8s.io/v1/tokenreviews", body)
        except Exception as err:  # an unreachable API server fails the request, not the server
            log.warning("TokenReview failed: %s", type(err).__name__)
            raise Unauthenticated("token review failed") from None
        status = answer.get("status") if isinstance(answer, Mapping) else None
        if not isinstance(status, Mapping) or status.get("authenticated") is not True:
            self._cache.put(key, None)
            raise Unauthenticated("invalid bearer token")
        user = _user_from_review(status.get("user"))
        if not user.name:
            self._cache.put(key, None)
            raise Unauthenticated("invalid bearer token")
        self._cache.put(key, user)
        return user


def parse_always_allow_paths(value: str) -> tuple[str, ...]:
    """``--authorization-always-allow-paths``: comma-separated; ValueError names a bad path."""
    paths = tuple(p.strip() for p in value.split(",") if p.strip())
    _path_rules(paths)
    return paths


def _path_rules(paths: Sequence[str]) -> tuple[frozenset[str], tuple[str, ...]]:
    """k8s.io/apiserver/pkg/authorization/path: exact paths, and prefixes for a trailing ``*``;
    the leading slash is optional. A ``*`` anywhere else is refused."""
    exact: set[str] = set()
    prefixes: list[str] = []
    for raw in paths:
        p = raw.strip()
        if not p:
            continue
        p = p if p.startswith("/") else "/" + p
        if "*" in p[:-1]:
            raise ValueError(f"only trailing * allowed in {raw!r}")
        if p.endswith("*"):
            prefixes.append(p[:-1])
        else:
            exact.add(p)
    return frozenset(exact), tuple(prefixes)


class DelegatedAuthorizer:
    def __init__(
        self,
        client: ReviewClient | None,
        *,
        always_allow_paths: Sequence[str] = DEFAULT_ALWAYS_ALLOW_PATHS,
        always_allow_groups: Sequence[str] = PRIVILEGED_GROUPS,
        allow_ttl: float = CACHE_TTL,
        deny_ttl: float = CACHE_TTL,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.client = client
        self._exact, self._prefixes = _path_rules(always_allow_paths)
        self._groups = frozenset(always_allow_groups)
        self._allowed = _TTLCache(allow_ttl, clock)
        self._denied = _TTLCache(deny_ttl, clock)

    def authorize(self, user: UserInfo, verb: str, path: str) -> tuple[bool, str]:
        """(allowed, reason) for a non-resource request."""
        if self._groups.intersection(user.groups):
            return True, ""
        if path in self._exact or any(path.startswith(p) for p in self._prefixes):
            return True, ""
        if self.client is None:
            return False, ""
        key = (user.name, user.uid, user.groups, tuple(sorted(user.extra.items())), verb, path)
        for cache, allowed in ((self._allowed, True), (self._denied, False)):
            hit, reason = cache.get(key)
            if hit:
                return allowed, str(reason)
        spec: dict[str, Any] = {
            "nonResourceAttributes": {"path": path, "verb": verb},
            "user": user.name,
            "groups": list(user.groups),
        }
        if user.uid:
            spec["uid"] = user.uid
        if user.extra:
            spec["extra"] = {k: list(v) for k, v in user.extra.items()}
        body = {"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview", "spec": spec}
        try:
            answer = self.client.post("/apis/authorization.k8s.io/v1/subjectaccessreviews", body)
        except Exception as err:
            log.warning("SubjectAccessReview failed: %s", type(err).__name__)
            return False, "authorization check failed"
        status = answer.get("status") if isinstance(answer, Mapping) else None
        status = status if isinstance(status, Mapping) else {}
        allowed = status.get("allowed") is True and status.get("denied") is not True
        reason = str(status.get("reason") or "")
        (self._allowed if allowed else self._denied).put(key, reason)
        return allowed, reason


def _status_body(code: int, reason: str, message: str) -> bytes:
    """A metav1.Status as the API server's responsewriters write it."""
    status: dict[str, Any] = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": code,
    }
    if code == 403:
        status["details"] = {}
    return (json.dumps(status) + "\n").encode()


class AuthFilter:
    """WSGI middleware: authenticate, authorize, then call the app (WithAuthentication, WithAuthorization)."""

    def __init__(self, app: WSGIApp, authenticator: DelegatedAuthenticator, authorizer: DelegatedAuthorizer) -> None:
        self.app = app
        self.authenticator = authenticator
        self.authorizer = authorizer

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        headers = [("Content-Type", "application/json"), ("X-Content-Type-Options", "nosniff")]
        try:
            user = self.authenticator.authenticate(environ)
        except Unauthenticated as err:
            log.debug("unauthenticated request to %s: %s", environ.get("PATH_INFO", ""), err)
            start_response("401 Unauthorized", headers)
            return [_status_body(401, "Unauthorized", "Unauthorized")]
        path = str(environ.get("PATH_INFO") or "/")
        verb = str(environ.get("REQUEST_METHOD") or "GET").lower()
        allowed, reason = self.authorizer.authorize(user, verb, path)
        if not allowed:
            message = f"forbidden: User {json.dumps(user.name)} cannot {verb} path {json.dumps(path)}"
            if reason:
                message += f": {reason}"
            start_response("403 Forbidden", headers)
            return [_status_body(403, "Forbidden", message)]
        return self.app(environ, start_response)
