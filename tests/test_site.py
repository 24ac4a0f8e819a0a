"""The built documentation site in a real browser: the home page and the MCTS tutorial render, and no
internal link of theirs (nor of any other page) is broken.

The site is built strictly and served on a local port by tools/pictures/docs_site.py's functions (the ones that
also take the site's screenshots); Chromium is headless (tests/browser.py: on CI a missing Chromium fails the
test, elsewhere it skips).
"""

from __future__ import annotations

import html.parser
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from browser import browser, site_tools
from extras import needs

pytestmark = [needs("docs"), pytest.mark.slow]  # a site build and a browser: make test-slow (CI runs it)


class Links(html.parser.HTMLParser):
    """The ``href`` / ``src`` of a page's elements, and its element ids."""

    def __init__(self) -> None:
        super().__init__()
        self.targets: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if name in ("href", "src") and value:
                self.targets.append(value)
            elif name == "id" and value:
                self.ids.add(value)


def parse(text: str) -> Links:
    links = Links()
    links.feed(text)
    return links


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("site")
    site_tools.build_site(path)
    return path


@pytest.fixture(scope="module")
def base(site: Path) -> Iterator[str]:
    with site_tools.serve(site) as url:
        yield url


def rendered(url: str) -> str:
    """The page's DOM after its scripts ran, as Chromium has it."""
    result = browser("--virtual-time-budget=3000", "--dump-dom", url)
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout


def fetch(url: str) -> str:
    with urllib.request.urlopen(url, timeout=30) as response:  # noqa: S310 - our own local server
        assert response.status == 200
        return response.read().decode("utf-8", errors="replace")


def broken_links(page_url: str, dom: str, base: str) -> list[str]:
    """Every link or resource of the page on our server that does not answer, or whose #anchor is missing."""
    broken = []
    pages: dict[str, Links] = {}
    for target in set(parse(dom).targets):
        url = urllib.parse.urljoin(page_url, target)
        if not url.startswith(base):
            continue  # other sites are not ours to check (the site links none but the theme's)
        address, _, anchor = url.partition("#")
        try:
            if address not in pages:
                pages[address] = parse(fetch(address))
        except (urllib.error.URLError, AssertionError) as error:
            broken.append(f"{target} ({error})")
            continue
        if anchor and address.endswith("/") and urllib.parse.unquote(anchor) not in pages[address].ids:
            broken.append(f"{target} (no element with id {anchor!r})")
    return broken


def test_home_page_renders(base: str, tmp_path: Path) -> None:
    dom = rendered(base)
    assert "<title>connect4_env</title>" in dom
    for entry in ("Getting started", "MCTS step by step", "Benchmarks", "API reference"):
        assert entry in dom  # the navigation is there
    picture = tmp_path / "index.png"
    site_tools.screenshot(base, picture)
    assert picture.stat().st_size > 20_000  # a blank or unstyled page compresses to far less


def test_mcts_tutorial_renders(base: str, tmp_path: Path) -> None:
    url = base + "tutorials/mcts/"
    dom = rendered(url)
    assert "MCTS step by step" in dom and "<h1" in dom
    images = [t for t in parse(dom).targets if t.endswith((".png", ".svg")) and "img/" in t]
    assert images, "the tutorial shows its pictures"
    assert 'class="highlight"' in dom  # its code blocks are highlighted
    picture = tmp_path / "mcts.png"
    site_tools.screenshot(url, picture)
    assert picture.stat().st_size > 20_000


@pytest.mark.parametrize("page", ["", "tutorials/mcts/"])
def test_no_broken_internal_link_in_the_browser(base: str, page: str) -> None:
    url = base + page
    assert broken_links(url, rendered(url), base) == []


def test_no_broken_internal_link_on_any_page(site: Path, base: str) -> None:
    # the same check without the browser, on every page of the built site
    broken = []
    for html_file in sorted(site.rglob("index.html")):
        relative = html_file.parent.relative_to(site).as_posix()
        url = base + (relative + "/" if relative != "." else "")
        broken += [f"{relative}: {b}" for b in broken_links(url, html_file.read_text(), base)]
    assert broken == []


def test_broken_link_is_found(base: str) -> None:
    # the checker itself: a missing page and a missing anchor are reported, a good link is not
    dom = (
        '<a href="nope/">x</a><a href="getting-started/#no-such-anchor">y</a><a href="getting-started/">z</a>'
    )
    found = sorted(b.split(" ")[0] for b in broken_links(base, dom, base))
    assert found == ["getting-started/#no-such-anchor", "nope/"]
