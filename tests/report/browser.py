"""Headless Chromium (Debian's `chromium`), as the report's tests drive it: DOM dumps, screenshots.

A report is opened from a file with the flags this machine needs (no sandbox as root, no GPU, no
background traffic to Google); `--virtual-time-budget` lets its scripts run to the end before
the DOM is dumped. A probe script, put first in the page's head, records what the page itself
cannot show in its DOM: uncaught errors, console errors and every resource it loaded.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--hide-scrollbars",
)
VIRTUAL_MS = 20000

PROBE = """<script>
(() => {
  const seen = { errors: [], console: [] };
  addEventListener("error", (e) => seen.errors.push(String(e.message || e)));
  addEventListener("unhandledrejection", (e) => seen.errors.push(String(e.reason)));
  for (const level of ["error", "warn"]) {
    const original = console[level];
    console[level] = (...args) => {
      seen.console.push(level + ": " + args.join(" "));
      original(...args);
    };
  }
  const report = () => {
    const state = document.body && document.body.dataset.rendered;
    if (!state || state === "no") return setTimeout(report, 50);
    const out = document.createElement("pre");
    out.id = "test-probe";
    out.textContent = JSON.stringify({
      rendered: state,
      errors: seen.errors,
      console: seen.console,
      resources: performance.getEntriesByType("resource").map((r) => r.name),
      pwned: window.__pwned === true,
    });
    document.body.append(out);
  };
  addEventListener("load", report);
})();
</script>"""


def chromium() -> str:
    """The Chromium binary, or a skip saying how to get it."""
    for name in ("chromium", "chromium-headless-shell", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    missing = (
        "chromium is not installed: `apt-get install chromium` (.ci/run installs it when it is "
        "missing, so that CI runs these tests)"
    )
    if os.environ.get("CI") == "true":
        pytest.fail(f"{missing}; under CI it must be there")
    pytest.skip(missing)


def probed(report: Path, folder: Path) -> Path:
    """A copy of `report` with the probe first in its head."""
    html = report.read_text(encoding="utf-8")
    assert html.count("<head>") == 1
    copy = folder / f"probed-{report.name}"
    copy.write_text(html.replace("<head>", "<head>" + PROBE, 1), encoding="utf-8")
    return copy


def _run(page: Path, profile: Path, *args: str, fragment: str = "") -> str:
    url = page.resolve().as_uri() + (f"#{fragment}" if fragment else "")
    done = subprocess.run(
        [
            chromium(),
            *FLAGS,
            f"--user-data-dir={profile}",
            f"--virtual-time-budget={VIRTUAL_MS}",
            *args,
            url,
        ],
        capture_output=True,
        text=True,
        timeout=90,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def dump_dom(
    page: Path,
    profile: Path,
    *,
    fragment: str = "",
    screenshot: Path | None = None,
    size: tuple[int, int] = (1400, 2400),
) -> str:
    """The page's DOM once its scripts have run; with `screenshot`, a PNG of its top too.

    One Chromium run does both: starting a browser is most of the cost.
    """
    shot = (
        [f"--window-size={size[0]},{size[1]}", f"--screenshot={screenshot}"] if screenshot else []
    )
    return _run(page, profile, "--dump-dom", *shot, fragment=fragment)


@dataclass
class Element:
    """An element of the dumped DOM: its tag, attributes and children."""

    tag: str
    attrs: dict[str, str]
    children: list[Element]
    text: str = ""

    def walk(self) -> list[Element]:
        out = [self]
        for child in self.children:
            out += child.walk()
        return out

    def classes(self) -> set[str]:
        return set(self.attrs.get("class", "").split())

    def find(self, **attrs: str) -> list[Element]:
        return [e for e in self.walk() if all(e.attrs.get(k) == v for k, v in attrs.items())]

    def by_id(self, ident: str) -> Element:
        found = self.find(id=ident)
        assert len(found) == 1, f"{len(found)} elements with id {ident!r}"
        return found[0]

    def all_text(self) -> str:
        return self.text + "".join(c.all_text() for c in self.children)


VOID = {
    "area",
    "base",
    "br",
    "col",
    "embed",
    "hr",
    "img",
    "input",
    "link",
    "meta",
    "source",
    "track",
    "wbr",
}


class _Builder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Element("#document", {}, [])
        self.stack = [self.root]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        element = Element(tag, {k: v or "" for k, v in attrs}, [])
        self.stack[-1].children.append(element)
        if tag not in VOID:
            self.stack.append(element)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.stack[-1].children.append(Element(tag, {k: v or "" for k, v in attrs}, []))

    def handle_endtag(self, tag: str) -> None:
        for i in range(len(self.stack) - 1, 0, -1):
            if self.stack[i].tag == tag:
                del self.stack[i:]
                return

    def handle_data(self, data: str) -> None:
        self.stack[-1].children.append(Element("#text", {}, [], data))


def parse(dom: str) -> Element:
    builder = _Builder()
    builder.feed(dom)
    builder.close()
    return builder.root


def probe_of(root: Element) -> dict[str, Any]:
    """What the probe recorded; fails if it never wrote (the page never finished rendering)."""
    found = root.find(id="test-probe")
    assert found, "the page never set data-rendered: its scripts did not finish"
    result: dict[str, Any] = json.loads(found[0].all_text())
    return result
