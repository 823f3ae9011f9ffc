"""A small JSON-over-HTTP client for OpenAI-compatible endpoints (stdlib only).

Connecting has its own short timeout (3 s by default) and is not retried, so an unreachable
endpoint fails within seconds with an error naming the URL; reading a reply has a longer one
(a model may think). A 5xx or 429 reply is retried at most twice, after 0.25 s and 0.5 s.
Replies are read up to a size limit. ``HTTP(S)_PROXY`` / ``NO_PROXY`` are honoured (no proxy
authentication).
"""

from __future__ import annotations

import http.client
import json
import socket
import ssl
import time
import urllib.request
from typing import Any, Dict, Optional
from urllib.parse import urlsplit

CONNECT_TIMEOUT = 3.0
READ_TIMEOUT = 120.0
RETRY_DELAYS = (0.25, 0.5)


class HTTPFailure(Exception):
    """A request that did not give a JSON reply: ``status`` is None when no reply came."""

    def __init__(self, message: str, status: Optional[int] = None, url: str = "") -> None:
        super().__init__(message)
        self.status = status
        self.url = url


def _connection(url: str, connect_timeout: float) -> "tuple[http.client.HTTPConnection, str]":
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise HTTPFailure(f"not an http(s) URL: {url!r}", url=url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    target = parts.path or "/"
    if parts.query:
        target += "?" + parts.query
    proxy = None
    if not urllib.request.proxy_bypass(parts.hostname):
        proxy = urllib.request.getproxies().get(parts.scheme)
    if proxy:
        p = urlsplit(proxy if "://" in proxy else "http://" + proxy)
        if parts.scheme == "https":
            conn: http.client.HTTPConnection = http.client.HTTPSConnection(
                p.hostname, p.port or 80, timeout=connect_timeout,
                context=ssl.create_default_context(),
            )
            conn.set_tunnel(parts.hostname, port)
        else:
            conn = http.client.HTTPConnection(p.hostname, p.port or 80, timeout=connect_timeout)
            target = url
        return conn, target
    if parts.scheme == "https":
        conn = http.client.HTTPSConnection(
            parts.hostname, port, timeout=connect_timeout, context=ssl.create_default_context()
        )
    else:
        conn = http.client.HTTPConnection(parts.hostname, port, timeout=connect_timeout)
    return conn, target


def _error_text(raw: bytes) -> str:
    try:
        body = json.loads(raw)
    except ValueError:
        return raw.decode("utf-8", "replace")[:500]
    if isinstance(body, dict):
        error = body.get("error")
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return error["message"]
        if isinstance(error, str):
            return error
        if isinstance(body.get("message"), str):
            return body["message"]
    return json.dumps(body)[:500]


def post_json(
    url: str,
    body: Dict[str, Any],
    *,
    api_key: Optional[str] = None,
    max_bytes: int = 8 << 20,
    connect_timeout: float = CONNECT_TIMEOUT,
    read_timeout: float = READ_TIMEOUT,
    headers: Optional[Dict[str, str]] = None,
) -> Any:
    """POST ``body`` as JSON to ``url`` and return the decoded JSON reply."""
    data = json.dumps(body).encode("utf-8")
    sent = {"Content-Type": "application/json", "Accept": "application/json"}
    if api_key:
        sent["Authorization"] = f"Bearer {api_key}"
    sent.update(headers or {})
    attempt = 0
    while True:
        conn, target = _connection(url, connect_timeout)
        try:
            try:
                conn.connect()
            except (OSError, socket.timeout) as exc:
                raise HTTPFailure(
                    f"could not connect to {url} within {connect_timeout:g} s: {exc}", url=url
                ) from exc
            if conn.sock is not None:
                conn.sock.settimeout(read_timeout)
            try:
                conn.request("POST", target, body=data, headers=sent)
                reply = conn.getresponse()
                raw = reply.read(max_bytes + 1)
            except (OSError, socket.timeout, http.client.HTTPException) as exc:
                raise HTTPFailure(f"request to {url} failed: {exc}", url=url) from exc
        finally:
            conn.close()
        if len(raw) > max_bytes:
            raise HTTPFailure(f"reply from {url} is larger than {max_bytes} bytes", url=url)
        status = reply.status
        if status < 300:
            try:
                return json.loads(raw)
            except ValueError as exc:
                raise HTTPFailure(
                    f"reply from {url} is not JSON: {raw[:200]!r}", status=status, url=url
                ) from exc
        retriable = status >= 500 or status == 429
        if retriable and attempt < len(RETRY_DELAYS):
            time.sleep(RETRY_DELAYS[attempt])
            attempt += 1
            continue
        raise HTTPFailure(f"Error code: {status} - {_error_text(raw)}", status=status, url=url)
