"""The review page's HTTP server: 127.0.0.1 only, a per-launch token, Host/Origin/CSRF checks.

Any local process (an agent with a shell included) and any web page the browser opens
can reach a port on 127.0.0.1, so every request must carry the launch token (in the URL
once, then an HttpOnly SameSite=Strict cookie), name this server in its Host header (a
rebound DNS name is refused), and a POST must also come from this page's Origin with its
CSRF token. Approving still needs the proposal's own approval token: the page adds no
way to write memory that the CLI does not already have.
"""

from __future__ import annotations

import contextlib
import hmac
import json
import os
import secrets
import sys
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from engram.core.api import forget_open_indexes, require_roots
from engram.core.errors import EngramError, NotFoundError
from engram.ui import views

COOKIE = "engram_ui"
VIEW_TIMEOUT_S = 20.0
CSRF_HEADER = "X-Engram-CSRF"
MAX_BODY = 64 * 1024
CSP = (
    "default-src 'none'; script-src 'nonce-{n}'; style-src 'nonce-{n}'; connect-src 'self'; "
    "img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)


class CoreWorker:
    """The one thread the core runs on (its SQLite connections belong to the thread that
    opened them), as a daemon: a call that never returns cannot keep the process alive."""

    def __init__(self) -> None:
        import queue
        import threading

        self.calls: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self.thread = threading.Thread(target=self._loop, name="engram-ui-core", daemon=True)
        self.thread.start()

    def _loop(self) -> None:
        while True:
            call = self.calls.get()
            if call is None:
                return
            fn, args, done, box = call
            try:
                box.append((True, fn(*args)))
            except BaseException as exc:  # handed to the request's thread
                box.append((False, exc))
            done.set()

    def run(self, fn: Any, args: tuple, timeout: float) -> Any:
        import threading

        done, box = threading.Event(), []
        self.calls.put((fn, args, done, box))
        if not done.wait(timeout):
            raise TimeoutError
        ok, value = box[0]
        if not ok:
            raise value
        return value

    def stop(self) -> None:
        self.calls.put(None)


class UIServer(ThreadingHTTPServer):
    """One launch: the roots' start folder, its secrets, and the names it answers to."""

    daemon_threads = True

    def __init__(self, start: Path | None, port: int = 0) -> None:
        import threading

        require_roots(start)  # no root here: one clear error before the port opens
        # The core caches SQLite connections per process, each usable only on the thread
        # that opened it: every core call runs on one worker (which also serialises them).
        self.core = CoreWorker()
        self.core_lock = threading.Lock()
        try:
            super().__init__(("127.0.0.1", port), Handler)
        except OSError as exc:
            self.core.stop()
            raise EngramError(
                f"cannot listen on 127.0.0.1:{port}: {exc.strerror or exc}; choose another "
                "--port, or leave it out for a free one",
                code="ui.port",
            ) from None
        self.start = start
        self.token = secrets.token_urlsafe(32)
        self.csrf = secrets.token_urlsafe(32)
        self.port = int(self.server_address[1])
        self.hosts = {f"127.0.0.1:{self.port}", f"localhost:{self.port}"}
        self.origins = {f"http://{h}" for h in self.hosts}

    def run_core(self, fn: Any, *args: Any, timeout: float | None = None) -> Any:
        """Run `fn(*args)` on the core's thread and return (or raise) what it did.

        A view that takes longer than VIEW_TIMEOUT_S is answered with an error and its
        worker is left behind: the next views run on a new one, so one stuck view (a file
        that never answers) cannot block the page."""

        with self.core_lock:
            worker = self.core
        try:
            return worker.run(fn, args, VIEW_TIMEOUT_S if timeout is None else timeout)
        except TimeoutError:
            with self.core_lock:
                if self.core is worker:
                    worker.stop()
                    self.core = CoreWorker()
            raise EngramError(
                f"this view took longer than {VIEW_TIMEOUT_S:.0f} s and was given up; the "
                "rest of the page still works (`engram doctor` in a terminal says more)",
                code="ui.timeout",
            ) from None

    def server_close(self) -> None:
        with contextlib.suppress(Exception):
            self.run_core(forget_open_indexes, timeout=5.0)
        self.core.stop()
        super().server_close()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/?token={self.token}"


class Refused(Exception):
    """A request refused before any memory is read: status and a specific reason."""

    def __init__(self, status: HTTPStatus, message: str, code: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.code = code


def _page(nonce: str, csrf: str) -> bytes:
    html = resources.files("engram.ui").joinpath("static/index.html").read_text("utf-8")
    # both values are URL-safe base64: no quoting is needed inside an attribute
    return html.replace("{{NONCE}}", nonce).replace("{{CSRF}}", csrf).encode("utf-8")


class Handler(BaseHTTPRequestHandler):
    server: UIServer
    protocol_version = "HTTP/1.1"
    server_version = "engram-ui"
    sys_version = ""

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: request lines would carry the launch token into terminal scrollback."""

    # ------------------------------------------------------------ checks

    def _check_host(self) -> None:
        host = self.headers.get("Host", "")
        if host not in self.server.hosts:
            raise Refused(
                HTTPStatus.FORBIDDEN,
                f"Host {host!r} is not this server; open the URL `engram ui` printed "
                f"(127.0.0.1:{self.server.port} or localhost:{self.server.port})",
                "ui.host",
            )

    def _cookie_token(self) -> str | None:
        from http.cookies import CookieError, SimpleCookie

        raw = self.headers.get("Cookie")
        if not raw:
            return None
        try:
            jar = SimpleCookie(raw)
        except CookieError:
            return None
        morsel = jar.get(COOKIE)
        return morsel.value if morsel else None

    def _authorised(self, query: dict[str, list[str]]) -> bool:
        """True when the URL carries the token (the first visit); cookie otherwise."""
        given = query.get("token", [None])[0]
        if given is not None:
            if hmac.compare_digest(given.encode(), self.server.token.encode()):
                return True
            raise Refused(HTTPStatus.FORBIDDEN, "wrong token in the URL", "ui.token")
        cookie = self._cookie_token()
        if cookie is not None and hmac.compare_digest(cookie.encode(), self.server.token.encode()):
            return False
        raise Refused(
            HTTPStatus.FORBIDDEN,
            "missing or wrong launch token; open the full URL `engram ui` printed",
            "ui.token",
        )

    def _check_post(self) -> dict[str, Any]:
        origin = self.headers.get("Origin")
        if origin not in self.server.origins:
            raise Refused(
                HTTPStatus.FORBIDDEN,
                f"Origin {origin!r} may not change memory; only this page may",
                "ui.origin",
            )
        csrf = self.headers.get(CSRF_HEADER, "")
        if not hmac.compare_digest(csrf.encode(), self.server.csrf.encode()):
            raise Refused(HTTPStatus.FORBIDDEN, "missing or wrong CSRF token", "ui.csrf")
        if self.headers.get("Content-Type", "").split(";")[0].strip() != "application/json":
            raise Refused(
                HTTPStatus.UNSUPPORTED_MEDIA_TYPE, "send the body as application/json", "ui.body"
            )
        try:
            length = int(self.headers.get("Content-Length", "0"))
        except ValueError:
            length = -1
        if not 0 <= length <= MAX_BODY:
            raise Refused(
                HTTPStatus.REQUEST_ENTITY_TOO_LARGE,
                f"the body must be at most {MAX_BODY} bytes",
                "ui.body",
            )
        try:
            body = json.loads(self.rfile.read(length) or b"{}")
        except ValueError:
            raise Refused(HTTPStatus.BAD_REQUEST, "the body is not JSON", "ui.body") from None
        if not isinstance(body, dict):
            raise Refused(HTTPStatus.BAD_REQUEST, "the body must be a JSON object", "ui.body")
        return body

    # ------------------------------------------------------------ responses

    def _send(
        self,
        status: int,
        body: bytes,
        ctype: str,
        *,
        nonce: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Referrer-Policy", "no-referrer")
        self.send_header("X-Frame-Options", "DENY")
        self.send_header("Content-Security-Policy", CSP.format(n=nonce or "none"))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, status: int, doc: dict[str, Any]) -> None:
        body = json.dumps(doc, ensure_ascii=True, default=str).encode()
        self._send(status, body, "application/json; charset=utf-8")

    def _error(self, status: int, code: str, message: str) -> None:
        self._json(status, {"ok": False, "error": {"code": code, "message": message}})

    # ------------------------------------------------------------ dispatch

    def do_GET(self) -> None:
        self._handle("GET")

    def do_POST(self) -> None:
        self._handle("POST")

    def _handle(self, method: str) -> None:
        try:
            self._check_host()
            parts = urlsplit(self.path)
            query = parse_qs(parts.query, keep_blank_values=True)
            first_visit = self._authorised(query)
            if first_visit:  # set the cookie, then drop the token from the address bar
                cookie = f"{COOKIE}={self.server.token}; HttpOnly; SameSite=Strict; Path=/"
                self._send(
                    HTTPStatus.SEE_OTHER,
                    b"",
                    "text/plain",
                    headers={"Location": parts.path or "/", "Set-Cookie": cookie},
                )
                return
            body = self._check_post() if method == "POST" else {}
            self._route(method, parts.path, query, body)
        except Refused as exc:
            self.close_connection = True  # an unread body must not be taken for a request
            self._error(exc.status, exc.code, exc.message)
        except NotFoundError as exc:
            self._error(HTTPStatus.NOT_FOUND, exc.code, exc.message)
        except EngramError as exc:
            self._error(HTTPStatus.BAD_REQUEST, exc.code, exc.message)
        except OSError as exc:
            where = f": {exc.filename}" if exc.filename else ""
            self._error(HTTPStatus.INTERNAL_SERVER_ERROR, "ui.os", f"{exc.strerror or exc}{where}")
        except Exception as exc:  # one failed view must not stop the server
            self._error(
                HTTPStatus.INTERNAL_SERVER_ERROR, "ui.failed", f"{type(exc).__name__}: {exc}"
            )

    def _route(
        self, method: str, path: str, query: dict[str, list[str]], body: dict[str, Any]
    ) -> None:
        def arg(name: str) -> str:
            value = query.get(name, [""])[0]
            return value

        if method == "GET" and path == "/":
            nonce = secrets.token_urlsafe(16)
            page = _page(nonce, self.server.csrf)
            self._send(HTTPStatus.OK, page, "text/html; charset=utf-8", nonce=nonce)
            return
        gets = {
            "/api/memories": lambda r: views.list_memories(r),
            "/api/memory": lambda r: views.memory_detail(r, arg("scope"), arg("id")),
            "/api/load": lambda r: views.try_task(r, arg("task"), arg("roles")),
            "/api/proposals": lambda r: views.proposals(r),
            "/api/health": lambda r: views.health(self.server.start, r),
        }
        posts = {
            "/api/approve": lambda r: views.approve(
                r, body.get("token"), body.get("approve"), body.get("choices")
            ),
            "/api/decline": lambda r: views.decline(r, body.get("token"), body.get("reason")),
            "/api/accept-review": lambda r: views.accept_review(
                r, body.get("scope"), body.get("path")
            ),
        }
        table = gets if method == "GET" else posts
        if path not in table:
            other = posts if method == "GET" else gets
            if path in other:
                self._error(
                    HTTPStatus.METHOD_NOT_ALLOWED,
                    "ui.method",
                    f"{path} takes {'POST' if method == 'GET' else 'GET'}",
                )
            else:
                self._error(HTTPStatus.NOT_FOUND, "ui.not_found", f"no page {path!r} here")
            return
        view = table[path]

        def work() -> dict[str, Any]:
            return view(require_roots(self.server.start))  # live: a hand edit shows on reload

        self._json(HTTPStatus.OK, {"ok": True, "data": self.server.run_core(work)})


def serve(start: Path | None, port: int, *, open_browser: bool) -> int:
    """Run until Ctrl-C; prints the URL (with its token) for the person who launched it."""
    server = UIServer(start, port)
    opener: str | None = None
    import signal

    def stop(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)  # a service manager's stop is as clean as Ctrl-C
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:  # started in the background
        signal.signal(signal.SIGINT, stop)
    try:  # a stop may arrive as soon as the URL is out
        print(f"Engram review page: {server.url}", flush=True)
        print(
            "Open it in a browser (it trades the link's token for a cookie; a tool needs a "
            "cookie jar, e.g. `curl -L -c jar -b jar URL`). Press Ctrl-C to stop.",
            flush=True,
        )
        if open_browser:
            opener = _open_browser(server.url)
        server.serve_forever()
    except KeyboardInterrupt:
        print("engram ui: stopped", file=sys.stderr)
    finally:
        server.server_close()
        if opener is not None:
            with contextlib.suppress(OSError):
                os.unlink(opener)
    return 0


def _open_browser(url: str) -> str | None:
    """Open the page through a private redirect file, as notebook servers do.

    A browser started with the URL itself would show the launch token to every local
    user in the process list; the file (mode 0600) carries it instead.
    """
    import html
    import tempfile
    import webbrowser

    fd, path = tempfile.mkstemp(prefix="engram-ui-", suffix=".html")
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        target = html.escape(url, quote=True)
        fh.write(
            f'<!doctype html><meta http-equiv="refresh" content="0;url={target}">'
            f'<a href="{target}">Open the Engram review page</a>\n'
        )
    webbrowser.open(Path(path).as_uri())
    return path
