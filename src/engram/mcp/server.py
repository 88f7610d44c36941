"""`engram-mcp`: newline-delimited JSON-RPC on stdio, serving both MCP eras in one process.

The reader (main thread) never blocks on a tool: calls that reach the core run on worker
threads, so a tool waiting for the human's dialog answer does not stop stdin from being
read. All core calls go through one dedicated thread, in order, so the core never sees
two callers at once. Stdout carries JSON-RPC only; `print` is redirected to stderr.
"""

from __future__ import annotations

import json
import queue
import sys
import threading
import traceback
from collections.abc import Callable, Iterator
from typing import IO, Any

from engram.mcp import protocol as p
from engram.mcp.protocol import Era, RpcError

SERVER_NAME = "engram"
MAX_LINE_BYTES = 32 * 1024 * 1024
MAX_WORKERS = 32

# R-INS-1: one self-contained string of at most 512 characters, the same in both eras.
INSTRUCTIONS = (
    "Engram is this project's human-approved memory: rules, skills and knowledge. Before "
    "project work, call engram_load with the task and 2-4 short `queries` in the team's "
    "words to recall the rules and decisions that apply; skip it for general questions. "
    "To record lasting project knowledge, propose it with engram_save or "
    "engram_save_session and show the candidates: engram_commit needs the human, so call it "
    "only after they approved."
)
INSTRUCTIONS_CHARS = 512  # the whole string, map included (Codex reads no more)

USAGE = """\
usage: engram-mcp [--always-load] [--no-elicitation]

Engram's MCP server: JSON-RPC on stdin/stdout for an agent host (both MCP eras).
The workspace is $ENGRAM_WORKSPACE, else the folder the host starts it in.

  --always-load     mark engram_load with _meta["anthropic/alwaysLoad"] (Claude Code)
  --no-elicitation  always use the in-chat approval_token flow, never the approval dialog
"""

# Methods whose handlers may reach the core (or wait for the human): run off the reader.
_WORKER_METHODS = frozenset({"tools/call", "resources/list", "resources/read"})


def log(message: str) -> None:
    try:
        sys.stderr.write(f"engram-mcp: {message}\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


def _version() -> str:
    from engram import __version__

    return __version__


class _CoreThread:
    """Runs core calls one at a time on a single long-lived thread (started on first use)."""

    def __init__(self) -> None:
        self._q: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def call(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        if threading.current_thread() is self._thread:
            return fn(*args, **kwargs)
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._loop, name="engram-core", daemon=True)
                self._thread.start()
        done = threading.Event()
        box: list[Any] = [None, None]
        self._q.put((fn, args, kwargs, box, done))
        done.wait()
        if box[1] is not None:
            raise box[1]
        return box[0]

    def _loop(self) -> None:
        while True:
            item = self._q.get()
            if item is None:
                return
            fn, args, kwargs, box, done = item
            try:
                box[0] = fn(*args, **kwargs)
            except BaseException as exc:
                box[1] = exc
            finally:
                done.set()

    def stop(self) -> None:
        if self._thread is not None:
            self._q.put(None)
            self._thread.join(timeout=10)


class _Waiter:
    """A server-to-client request waiting for the client's answer."""

    def __init__(self) -> None:
        self.event = threading.Event()
        self.result: Any = None
        self.error: str | None = None


class Server:
    """One stdio connection: legacy handshake state, pending dialogs, workers."""

    def __init__(
        self, out: IO[bytes], *, always_load: bool = False, elicitation: bool = True
    ) -> None:
        from engram.mcp.elicitation import Sealer

        self._out = out
        self._out_lock = threading.Lock()
        self._map: str | None = None  # what memory covers, for the instructions (once)
        self.out_closed = False
        self.always_load = always_load
        self.elicitation = elicitation
        self.sealer = Sealer()
        self.legacy_version: str | None = None
        self.legacy_caps: dict[str, Any] = {}
        self.initialized = False
        self._eof = False
        self._core = _CoreThread()
        self._pending: dict[int, _Waiter] = {}
        self._pending_lock = threading.Lock()
        self._next_id = 0
        self._workers: set[threading.Thread] = set()
        self._workers_lock = threading.Lock()
        self._slots = threading.BoundedSemaphore(MAX_WORKERS)

    # ------------------------------------------------------------ output

    def write(self, message: Any) -> None:
        """One JSON message per line; UTF-8 when possible, ASCII escapes when a lone surrogate needs them."""
        try:
            data = json.dumps(
                message, ensure_ascii=False, separators=(",", ":"), default=str
            ).encode("utf-8")
        except UnicodeEncodeError:
            data = json.dumps(
                message, ensure_ascii=True, separators=(",", ":"), default=str
            ).encode("ascii")
        with self._out_lock:
            if self.out_closed:
                return
            try:
                self._out.write(data + b"\n")
                self._out.flush()
            except (OSError, ValueError):
                self.out_closed = True

    # ------------------------------------------------------------ host services for tools

    def core(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        return self._core.call(fn, *args, **kwargs)

    def instructions(self) -> str:
        """The server instructions, then the map of what memory covers, so the model's own
        `queries` use the team's words. Read from the index as it stands: a handshake never
        builds one, and a workspace without memory gets the instructions alone."""
        if self._map is None:
            self._map = ""
            from engram.core import api
            from engram.core.errors import EngramError

            try:
                roots = api.require_roots()
                room = INSTRUCTIONS_CHARS - len(INSTRUCTIONS) - 1
                self._map = self.core(api.coverage_map, roots, refresh=False, max_chars=room)
            except EngramError:  # no memory here yet: the instructions alone
                pass
            except Exception as exc:  # the map is a hint: the handshake goes on without it
                log(f"no memory map in the instructions: {type(exc).__name__}: {exc}")
        return f"{INSTRUCTIONS} {self._map}" if self._map else INSTRUCTIONS

    def _enrichment(self) -> str:
        """The `enrich` prompt's text: the memories of this workspace without triggers."""
        from engram.core import api
        from engram.core.errors import EngramError

        try:
            return self.core(api.enrichment, api.require_roots()).text
        except EngramError as exc:
            raise RpcError(p.INTERNAL_ERROR, exc.message) from exc

    def can_dialog(self, era: Era) -> bool:
        """Legacy dialog: after the handshake, when the client declared form elicitation."""
        return (
            self.elicitation
            and not era.modern
            and self.initialized
            and era.form_elicitation()
            and not self._eof
            and not self.out_closed
        )

    def ask(self, method: str, params: dict[str, Any], timeout: float) -> Any:
        """Send a server-to-client request (own id space) and wait for its answer."""
        from engram.mcp.tools import DialogFailed, DialogTimeout

        waiter = _Waiter()
        with self._pending_lock:
            self._next_id += 1
            rid = self._next_id
            self._pending[rid] = waiter
        self.write({"jsonrpc": p.JSONRPC, "id": rid, "method": method, "params": params})
        if self.out_closed or self._eof:
            with self._pending_lock:
                self._pending.pop(rid, None)
            raise DialogFailed("the client is no longer connected")
        if not waiter.event.wait(timeout):
            with self._pending_lock:
                self._pending.pop(rid, None)
            self.write(
                {
                    "jsonrpc": p.JSONRPC,
                    "method": "notifications/cancelled",
                    "params": {"requestId": rid, "reason": "no answer in time"},
                }
            )
            raise DialogTimeout()
        if waiter.error is not None:
            raise DialogFailed(waiter.error)
        return waiter.result

    def _on_response(self, msg: dict[str, Any]) -> None:
        rid = msg.get("id")
        with self._pending_lock:
            waiter = self._pending.pop(rid, None) if isinstance(rid, int) else None
        if waiter is None:
            log(f"ignoring a response to unknown request id {rid!r}")
            return
        if "error" in msg:
            err = msg["error"]
            message = err.get("message") if isinstance(err, dict) else None
            waiter.error = str(message or "the client answered with an error")
        else:
            waiter.result = msg.get("result")
        waiter.event.set()

    # ------------------------------------------------------------ input

    def feed(self, raw: bytes) -> None:
        """Handle one line of stdin."""
        line = raw.strip()
        if not line:
            return
        try:
            msg = json.loads(line.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError):
            self.write(_error(None, p.PARSE_ERROR, "Parse error"))
            return
        if isinstance(msg, list) and msg:
            self._spawn(self._batch, msg)
        elif _is_response(msg):
            self._on_response(msg)
        elif isinstance(msg, dict) and _runs_on_worker(msg):
            self._spawn(self._answer, msg)
        else:
            self._answer(msg)

    def _answer(self, msg: Any) -> None:
        response = self.handle(msg)
        if response is not None:
            self.write(response)

    def _batch(self, messages: list[Any]) -> None:
        responses = []
        for msg in messages:
            if _is_response(msg):
                self._on_response(msg)
                continue
            response = self.handle(msg)
            if response is not None:
                responses.append(response)
        if responses:
            self.write(responses)

    def _spawn(self, fn: Callable[[Any], None], arg: Any) -> None:
        self._slots.acquire()

        def run() -> None:
            try:
                fn(arg)
            finally:
                with self._workers_lock:
                    self._workers.discard(threading.current_thread())
                self._slots.release()

        t = threading.Thread(target=run, name="engram-mcp-request", daemon=True)
        with self._workers_lock:
            self._workers.add(t)
        t.start()

    def close(self) -> None:
        """stdin reached EOF: fail open dialogs, let running calls finish, stop the core."""
        self._eof = True
        with self._pending_lock:
            waiters = list(self._pending.values())
            self._pending.clear()
        for w in waiters:
            w.error = "the client closed the connection"
            w.event.set()
        with self._workers_lock:
            workers = list(self._workers)
        for t in workers:
            t.join(timeout=30)
        self._core.stop()

    # ------------------------------------------------------------ dispatch

    def handle(self, msg: Any) -> dict[str, Any] | None:
        """The response to one message (None for notifications)."""
        if not isinstance(msg, dict):
            return _error(
                None, p.INVALID_REQUEST, "Invalid Request: a message must be a JSON object"
            )
        has_id = "id" in msg
        rid = msg.get("id")
        method = msg.get("method")
        if msg.get("jsonrpc") != p.JSONRPC or not isinstance(method, str):
            return _error(
                rid if p.valid_id(rid) else None,
                p.INVALID_REQUEST,
                'Invalid Request: expected "jsonrpc": "2.0" and a string "method"',
            )
        if not has_id:
            self._notification(method)
            return None
        if not p.valid_id(rid):
            return _error(
                None, p.INVALID_REQUEST, "Invalid Request: id must be a string or an integer"
            )
        params = msg.get("params", {})
        if params is None:
            params = {}
        try:
            if not isinstance(params, dict):
                raise RpcError(p.INVALID_PARAMS, "params must be an object")
            if p.is_modern(params):
                result = self._modern(method, params, p.modern_era(params))
            else:
                result = self._legacy(method, params)
        except RpcError as exc:
            return {"jsonrpc": p.JSONRPC, "id": rid, "error": exc.as_dict()}
        except Exception as exc:  # never let one message take the server down
            log(f"internal error on {method}: {exc!r}\n{traceback.format_exc()}")
            return _error(rid, p.INTERNAL_ERROR, f"Internal error: {type(exc).__name__}")
        return {"jsonrpc": p.JSONRPC, "id": rid, "result": result}

    def _notification(self, method: str) -> None:
        if method == "notifications/initialized":
            self.initialized = True

    def legacy_era(self) -> Era:
        return Era(self.legacy_version or p.LATEST_LEGACY, False, self.legacy_caps)

    def _legacy(self, method: str, params: dict[str, Any]) -> Any:
        if method == "initialize":
            return self._initialize(params)
        if method == "ping":
            return {}
        from engram.mcp.tools import BY_NAME

        if method in BY_NAME:
            return self._bare_tool(method, params)
        if method == "server/discover":
            raise RpcError(
                p.METHOD_NOT_FOUND,
                f"server/discover needs params._meta[{p.META_PROTOCOL_VERSION!r}] (MCP 2026-07-28)",
            )
        return self._serve(method, params, self.legacy_era())

    def _initialize(self, params: dict[str, Any]) -> dict[str, Any]:
        version = p.negotiate(params.get("protocolVersion"))
        caps = params.get("capabilities")
        self.legacy_version = version
        self.legacy_caps = caps if isinstance(caps, dict) else {}
        self.initialized = False
        return {
            "protocolVersion": version,
            "capabilities": {"tools": {"listChanged": False}, "resources": {}, "prompts": {}},
            "serverInfo": {"name": SERVER_NAME, "version": _version()},
            "instructions": self.instructions(),
        }

    def _modern(self, method: str, params: dict[str, Any], era: Era) -> dict[str, Any]:
        if method not in p.MODERN_METHODS:
            raise RpcError(
                p.METHOD_NOT_FOUND, f"Method not found: {method!r} is not part of MCP {era.version}"
            )
        if method == "server/discover":
            result: dict[str, Any] = {
                "supportedVersions": list(p.MODERN_VERSIONS),
                "capabilities": {"tools": {}, "resources": {}, "prompts": {}},
                "instructions": self.instructions(),
            }
        else:
            result = self._serve(method, params, era)
        result.setdefault("resultType", "complete")
        if result["resultType"] == "complete" and method in p.CACHE_HINTS:
            result["ttlMs"], result["cacheScope"] = p.CACHE_HINTS[method]
        meta = dict(result.get("_meta") or {})
        meta[p.META_SERVER_INFO] = {"name": SERVER_NAME, "version": _version()}
        result["_meta"] = meta
        return result

    def _serve(self, method: str, params: dict[str, Any], era: Era) -> dict[str, Any]:
        """Methods both eras share."""
        if method == "tools/list":
            from engram.mcp.tools import TOOLS, describe

            return {"tools": [describe(t, era, always_load=self.always_load) for t in TOOLS]}
        if method == "tools/call":
            return self._tools_call(params, era)
        if method == "resources/list":
            from engram.mcp.resources import list_resources

            return {"resources": list_resources(era, self.core)}
        if method == "resources/templates/list":
            from engram.mcp.resources import list_templates

            return {"resourceTemplates": list_templates(era)}
        if method == "resources/read":
            from engram.mcp.resources import read_resource

            return read_resource(era, params.get("uri"), self.core)
        if method == "prompts/list":
            from engram.mcp.prompts import list_prompts

            return {"prompts": list_prompts(era)}
        if method == "prompts/get":
            from engram.mcp.prompts import get_prompt

            return get_prompt(params.get("name"), self._enrichment)
        raise RpcError(p.METHOD_NOT_FOUND, f"Method not found: {method!r}")

    # ------------------------------------------------------------ tools

    def _tools_call(self, params: dict[str, Any], era: Era) -> dict[str, Any]:
        from engram.mcp.tools import BY_NAME

        name = params.get("name")
        tool = BY_NAME.get(name) if isinstance(name, str) else None
        if tool is None:
            raise RpcError(p.INVALID_PARAMS, f"Unknown tool: {name!r}; tools: {', '.join(BY_NAME)}")
        args = params.get("arguments")
        if args is None:
            args = {}
        if not isinstance(args, dict):
            raise RpcError(p.INVALID_PARAMS, "tools/call params.arguments must be an object")
        outcome = self._run_tool(tool, args, era, params)
        if isinstance(outcome, dict):  # input_required (modern era only)
            if not era.modern:
                raise RpcError(
                    p.INTERNAL_ERROR, "input_required has no meaning in a legacy session"
                )
            return outcome
        result: dict[str, Any] = {"content": [{"type": "text", "text": outcome.text}]}
        if era.has("structured_content"):
            result["structuredContent"] = outcome.envelope()
        result["isError"] = not outcome.ok
        return result

    def _run_tool(self, tool: Any, args: dict[str, Any], era: Era, params: dict[str, Any]) -> Any:
        from engram.core.errors import EngramError
        from engram.core.results import error_result
        from engram.mcp.tools import Call, check_arguments

        try:
            checked = check_arguments(tool, args)
            from engram.core.api import require_roots

            roots = require_roots()  # per call: a workspace created after start is seen
            return tool.run(Call(tool.name, checked, era, params, self), roots)
        except EngramError as exc:
            from engram.core.api import public_text

            return error_result(exc.code, public_text(exc.message))
        except RpcError:
            raise
        except Exception as exc:
            log(f"internal error in {tool.name}: {exc!r}\n{traceback.format_exc()}")
            return error_result(
                "internal", f"internal error in {tool.name}: {type(exc).__name__}: {exc}"
            )

    def _bare_tool(self, name: str, params: dict[str, Any]) -> str:
        """R-WIRE-7: the tool name as the method (legacy only) answers with plain text."""
        from engram.mcp.tools import BY_NAME

        args = {k: v for k, v in params.items() if k != "_meta"}
        era = Era(self.legacy_era().version, False, {})  # no dialog: the token flow
        outcome = self._run_tool(BY_NAME[name], args, era, {})
        if outcome.ok:
            return outcome.text
        message = outcome.diagnostics[0].message if outcome.diagnostics else outcome.text
        code = (
            p.INVALID_PARAMS
            if outcome.diagnostics and outcome.diagnostics[0].code == "usage"
            else p.SERVER_ERROR
        )
        raise RpcError(code, message, outcome.envelope())


def _error(rid: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": p.JSONRPC, "id": rid, "error": {"code": code, "message": message}}


def _is_response(msg: Any) -> bool:
    return (
        isinstance(msg, dict)
        and "method" not in msg
        and ("result" in msg or "error" in msg)
        and "id" in msg
    )


def _runs_on_worker(msg: dict[str, Any]) -> bool:
    method = msg.get("method")
    return isinstance(method, str) and (method in _WORKER_METHODS or method.startswith("engram_"))


def read_lines(stream: IO[bytes]) -> Iterator[bytes]:
    """Lines of stdin; an oversized line becomes one unparseable line instead of eating memory."""
    while True:
        line = stream.readline(MAX_LINE_BYTES)
        if not line:
            return
        if len(line) >= MAX_LINE_BYTES and not line.endswith(b"\n"):
            while True:  # drain the rest of the oversized line
                rest = stream.readline(MAX_LINE_BYTES)
                if not rest or rest.endswith(b"\n"):
                    break
            yield b"\x00"  # answered as a parse error
            continue
        yield line


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    always_load, elicitation = False, True
    for arg in args:
        if arg == "--always-load":
            always_load = True
        elif arg == "--no-elicitation":
            elicitation = False
        elif arg in ("-h", "--help"):
            sys.stdout.write(USAGE)
            return 0
        elif arg == "--version":
            sys.stdout.write(f"engram-mcp {_version()}\n")
            return 0
        else:
            log(
                f"ignoring unknown option {arg!r} (known: --always-load, --no-elicitation)"
            )  # R-INS-6
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # R-PROTO-7: a stray print can never reach the protocol stream
    server = Server(stdout, always_load=always_load, elicitation=elicitation)
    try:
        for line in read_lines(stdin):
            try:
                server.feed(line)
            except Exception as exc:  # the loop must outlive any one message
                log(f"internal error while reading a message: {exc!r}\n{traceback.format_exc()}")
                server.write(_error(None, p.INTERNAL_ERROR, "Internal error"))
    except KeyboardInterrupt:
        pass
    finally:
        server.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
