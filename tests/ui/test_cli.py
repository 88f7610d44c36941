"""`engram ui` as a person runs it: the installed executable, its printed URL, Ctrl-C."""

from __future__ import annotations

import http.client
import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

import pytest

ENGRAM = shutil.which("engram") or str(Path(sys.executable).parent / "engram")


def _start(project: Path, *args: str) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [ENGRAM, "ui", "--no-browser", *args],
        cwd=project,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=os.environ.copy(),
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line.startswith("Engram review page: http://127.0.0.1:"), line + proc.stderr.read()
    return proc, line.split(": ", 1)[1].strip()


def _get(url: str, path: str, cookie: str | None) -> tuple[int, dict[str, str], bytes]:
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    conn.request("GET", path, headers={"Cookie": cookie} if cookie else {})
    resp = conn.getresponse()
    out = resp.status, dict(resp.getheaders()), resp.read()
    conn.close()
    return out


def test_the_printed_url_opens_the_page_and_ctrl_c_stops_it(project: Path) -> None:
    proc, url = _start(project, "--port", "0")
    try:
        parts = urlsplit(url)
        assert parts.hostname == "127.0.0.1"
        status, headers, _ = _get(url, f"/?{parts.query}", None)
        assert status == 303
        cookie = headers["Set-Cookie"].split(";")[0]
        status, _, page = _get(url, "/", cookie)
        assert status == 200 and b"Engram review" in page
        status, _, body = _get(url, "/api/memories", cookie)
        assert status == 200 and json.loads(body)["ok"]
        assert _get(url, "/api/memories", None)[0] == 403
    finally:
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0
    assert "Traceback" not in err
    assert parts.query.split("=", 1)[1] not in err  # the token is never logged


def test_a_port_out_of_range_is_a_clear_error(project: Path) -> None:
    p = subprocess.run(
        [ENGRAM, "ui", "--no-browser", "--port", "70000"],
        cwd=project, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert p.returncode == 2
    assert "--port must be an integer from 0 to 65535" in p.stderr


def test_a_port_in_use_is_a_clear_error(project: Path) -> None:
    proc, url = _start(project)
    try:
        port = str(urlsplit(url).port)
        p = subprocess.run(
            [ENGRAM, "ui", "--no-browser", "--port", port],
            cwd=project, capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert p.returncode == 1
        assert p.stderr.startswith(f"engram: error: cannot listen on 127.0.0.1:{port}:")
        assert "Traceback" not in p.stderr
    finally:
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=30)


def test_no_memory_root_is_a_clear_error(tmp_path: Path) -> None:
    p = subprocess.run(
        [ENGRAM, "ui", "--no-browser"], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert p.returncode != 0
    assert "engram init" in p.stderr and "Traceback" not in p.stderr


@pytest.mark.skipif(not hasattr(signal, "SIGTERM"), reason="no SIGTERM on this platform")
def test_sigterm_stops_it_cleanly(project: Path) -> None:
    proc, _ = _start(project)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert "Traceback" not in err


def test_the_browser_gets_a_private_redirect_file_not_the_token(
    project: Path, tmp_path: Path
) -> None:
    seen = tmp_path / "browser-args.txt"
    browser = tmp_path / "fake-browser"
    browser.write_text(f'#!/bin/sh\nprintf "%s" "$1" > {seen}\ncat "${{1#file://}}" >> {seen}\n')
    browser.chmod(0o755)
    env = {**os.environ, "BROWSER": str(browser)}
    proc = subprocess.Popen(
        [ENGRAM, "ui"], cwd=project, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, env=env,
    )  # fmt: skip
    assert proc.stdout is not None
    url = proc.stdout.readline().split(": ", 1)[1].strip()
    token = url.split("token=", 1)[1]
    try:
        for _ in range(600):  # the browser runs in the background; wait for its file
            if seen.exists() and token in seen.read_text():
                break
            subprocess.run(["sleep", "0.05"], check=True)
        arg, _, page = seen.read_text().partition("<")
        assert arg.startswith("file://") and token not in arg
        assert url in page
    finally:
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=30)
    assert not Path(arg.removeprefix("file://")).exists()  # removed when the server stops
