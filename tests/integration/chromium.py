"""Headless Chromium against the Prefect UI: screenshots and the DOM after scripts ran, and a
DevTools-protocol session that measures rendered elements and screenshots parts of a page."""

from __future__ import annotations

import base64
import contextlib
import json
import os
import shutil
import struct
import subprocess
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from websockets.sync.client import connect

NAMES = ("chromium", "chromium-browser")
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-dev-shm-usage",
    "--window-size=1400,1000",
    "--virtual-time-budget=15000",  # let the single-page app fetch from the API and render
)
TIMEOUT_S = 120.0


def find_chromium() -> str | None:
    for name in NAMES:
        found = shutil.which(name)
        if found:
            return found
    return None


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def require_chromium() -> str:
    """The browser, else a skip saying how to install it (a failure under CI, which has it)."""
    found = find_chromium()
    if found is None:
        if in_ci():
            pytest.fail(
                "CI is set but chromium is not installed: .ci/run installs the Debian packages "
                "chromium and fonts-dejavu-core when it runs as root"
            )
        pytest.skip(
            "chromium is not installed (Debian: apt-get install chromium fonts-dejavu-core)"
        )
    return found


def shots_dir() -> Path | None:
    """Where the UI tests also save their cropped screenshots for the docs
    (LME_UI_SCREENSHOTS, e.g. docs/), or None."""
    found = os.environ.get("LME_UI_SCREENSHOTS", "").strip()
    return Path(found) if found else None


def _run(binary: str, profile: Path, *args: str) -> subprocess.CompletedProcess[str]:
    profile.mkdir(parents=True, exist_ok=True)
    result = subprocess.run(
        [binary, *FLAGS, f"--user-data-dir={profile}", *args],
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
    )
    if result.returncode != 0:
        raise RuntimeError(f"chromium failed ({result.returncode}):\n{result.stderr[-3000:]}")
    return result


def render(binary: str, url: str, shot: Path, profile: Path) -> str:
    """Load `url`, write a screenshot to `shot`, and return the DOM as rendered."""
    dom = _run(binary, profile, "--dump-dom", f"--screenshot={shot}", url).stdout
    if not shot.is_file():
        raise RuntimeError(f"chromium wrote no screenshot of {url}")
    return dom


def png_size(path: Path) -> tuple[int, int]:
    """(width, height) from a PNG's IHDR chunk."""
    head = path.read_bytes()[:24]
    if head[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError(f"{path}: not a PNG")
    width, height = struct.unpack(">II", head[16:24])
    return width, height


class DevTools:
    """Headless Chromium driven over the DevTools protocol: open a page, wait for what its
    scripts render, measure elements and screenshot a part of the page."""

    def __init__(self, binary: str, profile: Path, width: int = 1400, height: int = 1000) -> None:
        profile.mkdir(parents=True, exist_ok=True)
        flags = [f for f in FLAGS if not f.startswith(("--window-size", "--virtual-time"))]
        self._process = subprocess.Popen(
            [
                binary,
                *flags,
                f"--window-size={width},{height}",
                f"--user-data-dir={profile}",
                "--remote-debugging-port=0",
                "about:blank",
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        self._next_id = 0
        try:
            port = self._port(profile / "DevToolsActivePort")
            self._socket = connect(self._page_socket(port), max_size=None, open_timeout=30)
        except BaseException:
            self.close()
            raise

    def _port(self, active: Path) -> int:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                raise RuntimeError(f"chromium exited ({self._process.returncode})")
            if active.is_file() and active.read_text().strip():
                return int(active.read_text().split()[0])
            time.sleep(0.2)
        raise TimeoutError("chromium opened no DevTools port within 60 s")

    @staticmethod
    def _page_socket(port: int) -> str:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10) as r:
            targets = json.loads(r.read())
        return str(next(t for t in targets if t["type"] == "page")["webSocketDebuggerUrl"])

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        self._next_id += 1
        self._socket.send(json.dumps({"id": self._next_id, "method": method, "params": params}))
        while True:
            message = json.loads(self._socket.recv(timeout=TIMEOUT_S))
            if message.get("id") == self._next_id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return dict(message.get("result", {}))

    def evaluate(self, expression: str) -> Any:
        found = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        if "exceptionDetails" in found:
            raise RuntimeError(f"script failed: {found['exceptionDetails']}")
        return found["result"].get("value")

    def open(self, url: str, ready: str, timeout: float = 60.0) -> None:
        """Load `url`, then wait until the script `ready` is true (the app has rendered)."""
        self.call("Page.navigate", url=url)
        deadline = time.monotonic() + timeout
        check = f"(() => {{ try {{ return Boolean({ready}); }} catch (e) {{ return false; }} }})()"
        while not self.evaluate(check):
            if time.monotonic() > deadline:
                raise TimeoutError(f"{url}: not ready ({ready}) within {timeout:.0f} s")
            time.sleep(0.5)
        time.sleep(1.0)  # fonts and late layout settle

    def screenshot(self, path: Path, clip: dict[str, float] | None = None) -> None:
        """A PNG of the viewport, or of `clip` (x, y, width, height in page pixels)."""
        params: dict[str, Any] = {"format": "png", "captureBeyondViewport": clip is not None}
        if clip is not None:
            params["clip"] = {**clip, "scale": 1}
        found = self.call("Page.captureScreenshot", **params)
        path.write_bytes(base64.b64decode(found["data"]))

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self._socket.close()
        self._process.terminate()
        try:
            self._process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait(timeout=30)


TABLES_JS = """[...document.querySelectorAll('table')].map(t => {
  const r = t.getBoundingClientRect(), box = t.parentElement;
  return {header: [...t.rows[0].cells].map(c => c.textContent.trim()), text: t.innerText,
    left: r.left, top: r.top, right: r.right, bottom: r.bottom,
    overflow: box.scrollWidth - box.clientWidth};
})"""


def tables(browser: DevTools) -> list[dict[str, Any]]:
    """Every rendered table: its header cells, text, box in the viewport, and how far it
    overflows its container (> 0: cut, to be scrolled)."""
    return list(browser.evaluate(TABLES_JS))


def crop_tables(browser: DevTools, indices: list[int], path: Path) -> None:
    """A screenshot of the rendered tables at `indices` (of `tables`): the first scrolled to
    the top of its scrolling container, then the area holding them all."""
    browser.evaluate(f"document.querySelectorAll('table')[{indices[0]}].scrollIntoView()")
    time.sleep(0.5)
    found = tables(browser)
    crop(browser, [found[i] for i in indices], path)


def crop(browser: DevTools, boxes: list[dict[str, Any]], path: Path, margin: float = 12) -> None:
    """A screenshot of the smallest area holding every box (viewport coordinates; the clip
    is in the document's, so the window's scroll is added)."""
    x, y = browser.evaluate("[window.scrollX, window.scrollY]")
    left = max(min(b["left"] for b in boxes) - margin, 0) + x
    top = max(min(b["top"] for b in boxes) - margin, 0) + y
    right = max(b["right"] for b in boxes) + margin + x
    bottom = max(b["bottom"] for b in boxes) + margin + y
    browser.screenshot(path, {"x": left, "y": top, "width": right - left, "height": bottom - top})


def boxes_of(browser: DevTools, names: list[str]) -> list[dict[str, Any]]:
    """For each name shown on the page, the box of the largest element around it that shows
    no other of the names (its card), in viewport coordinates."""
    script = f"""(() => {{ const names = {json.dumps(names)};
      const others = (e, name) => names.some(n => n !== name && e.innerText.includes(n));
      return [...document.querySelectorAll('body *')]
        .filter(e => e.children.length === 0 && names.includes(e.textContent.trim()))
        .map(e => {{ const name = e.textContent.trim(); let card = e;
          while (card.parentElement && !others(card.parentElement, name)) card = card.parentElement;
          const r = card.getBoundingClientRect();
          return {{left: r.left, top: r.top, right: r.right, bottom: r.bottom}}; }});
    }})()"""
    return list(browser.evaluate(script))
