"""The built documentation site in a real browser: the home page and the MCTS tutorial render, no internal
link of theirs (nor of any other page) is broken, and the tutorials' pictures are legible at the width the
page gives them. On every built page: the table of contents lists each section, and docstrings render as
Markdown (cross-references as links, doctests as highlighted code, no reST role left as text).

The site is built strictly and served on a local port by tools/pictures/docs_site.py's functions (the ones that
also take the site's screenshots); Chromium is headless (tests/helpers/browser.py: on CI a missing Chromium fails the
test, elsewhere it skips).
"""

from __future__ import annotations

import html
import html.parser
import json
import re
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.browser import browser, site_tools
from helpers.extras import needs

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


class Sections(html.parser.HTMLParser):
    """A page's ``h2`` sections (their ids and titles), and the anchors its table of contents links."""

    def __init__(self) -> None:
        super().__init__()
        self.sections: dict[str, str] = {}
        self.toc: set[str] = set()
        self._toc_depth = 0  # nav elements open inside the table of contents (Material nests them)
        self._heading: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        if tag == "nav" and (self._toc_depth or "md-nav--secondary" in (attributes.get("class") or "")):
            self._toc_depth += 1
        elif tag == "a" and self._toc_depth and (attributes.get("href") or "").startswith("#"):
            self.toc.add((attributes["href"] or "#")[1:])
        elif tag == "h2" and attributes.get("id"):
            self._heading = attributes["id"]
            self.sections[self._heading] = ""

    def handle_endtag(self, tag: str) -> None:
        if tag == "nav" and self._toc_depth:
            self._toc_depth -= 1
        elif tag == "h2":
            self._heading = None

    def handle_data(self, data: str) -> None:
        if self._heading is not None:
            self.sections[self._heading] += data

    def missing(self) -> list[str]:
        """The titles of the sections the table of contents leaves out."""
        return [title.strip("¶ \n") for id_, title in self.sections.items() if id_ not in self.toc]


def sections(text: str) -> Sections:
    page = Sections()
    page.feed(text)
    return page


# A reST role that Markdown left as text (":class:" before the code span it made of `Board`), and a doctest
# that Markdown read as nested blockquotes (">>> x" is three levels of quote)
ROLE_TEXT = re.compile(r":(?:py:)?(?:class|func|meth|data|attr|mod|exc|obj|const):(?:<code>|`)[^<`]*")
QUOTED_DOCTEST = re.compile(r"<blockquote>\s*<blockquote>\s*<blockquote>\s*<p>([^<]{0,60})")
PROMPT = '<span class="gp">&gt;&gt;&gt; </span>'  # a doctest's prompt in a highlighted pycon block


def unrendered_docstrings(text: str) -> list[str]:
    """The reST roles and blockquoted doctests of a built page, as they appear in its HTML."""
    return ROLE_TEXT.findall(text) + [f">>> {code}" for code in QUOTED_DOCTEST.findall(text)]


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


def broken_links(page_url: str, dom: str, base: str, pages: dict[str, Links] | None = None) -> list[str]:
    """Every link or resource of the page on our server that does not answer, or whose #anchor is missing
    (``pages``: the targets already fetched, shared between the pages of one check)."""
    broken = []
    pages = {} if pages is None else pages
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
    pages: dict[str, Links] = {}  # each target fetched and parsed once, not once for every page linking it
    for html_file in sorted(site.rglob("index.html")):
        relative = html_file.parent.relative_to(site).as_posix()
        url = base + (relative + "/" if relative != "." else "")
        broken += [f"{relative}: {b}" for b in broken_links(url, html_file.read_text(), base, pages)]
    assert broken == []


def test_broken_link_is_found(base: str) -> None:
    # the checker itself: a missing page and a missing anchor are reported, a good link is not
    dom = (
        '<a href="nope/">x</a><a href="getting-started/#no-such-anchor">y</a><a href="getting-started/">z</a>'
    )
    found = sorted(b.split(" ")[0] for b in broken_links(base, dom, base))
    assert found == ["getting-started/#no-such-anchor", "nope/"]


ENV_PAGES = ["connect4_v0", "connect4-v0", "connect4flat-v0", "vector", "sb3-vecenv", "rllib"]


def test_every_section_is_in_the_table_of_contents(site: Path) -> None:
    missing = []
    for html_file in sorted(site.rglob("index.html")):
        page = sections(html_file.read_text())
        missing += [f"{html_file.parent.relative_to(site).as_posix()}: {title}" for title in page.missing()]
    assert missing == []


@pytest.mark.parametrize("page", ENV_PAGES)
def test_environment_page_lists_its_spec_sections(site: Path, page: str) -> None:
    # each env page renders its class's docstring, whose Gymnasium-style sections are the page's own h2 sections
    found = sections((site / "environments" / page / "index.html").read_text())
    titles = {found.sections[id_].strip("¶ \n") for id_ in found.toc if id_ in found.sections}
    assert {"Description", "Action Space", "Observation Space", "Rewards", "Version History"} <= titles
    assert found.missing() == []


def test_docstrings_render_as_markdown(site: Path) -> None:
    unrendered = []
    for html_file in sorted(site.rglob("index.html")):
        relative = html_file.parent.relative_to(site).as_posix()
        unrendered += [f"{relative}: {text}" for text in unrendered_docstrings(html_file.read_text())]
    assert unrendered == []


@pytest.mark.parametrize("page", ["api/connect4_env", "api/connect4_agents"])
def test_api_reference_has_links_and_highlighted_examples(site: Path, page: str) -> None:
    text = (site / page / "index.html").read_text()
    assert unrendered_docstrings(text) == []
    assert text.count(PROMPT) >= 2  # the docstrings' examples, as highlighted pycon code
    assert text.count('class="autorefs autorefs-internal"') >= 10  # cross-references, as links


def test_site_checkers_find_what_they_look_for() -> None:
    # the checkers themselves, on the HTML that the old docstrings and env pages made
    toc = '<nav class="md-nav md-nav--secondary"><ul><li><a href="#usage">Usage</a></li></ul></nav>'
    page = sections(toc + '<h2 id="usage">Usage</h2><h2 id="x--rewards">Rewards<a href="#x">¶</a></h2>')
    assert page.missing() == ["Rewards"]
    nested = '<nav class="md-nav md-nav--secondary"><nav><a href="#a">A</a></nav><a href="#b">B</a></nav>'
    assert sections(nested).toc == {"a", "b"}  # a nested nav does not end the table of contents
    old = (
        "<p>the position, :class:<code>Board</code>, on :mod:<code>connect4_env.rules</code></p>"
        "<blockquote>\n<blockquote>\n<blockquote>\n<p>round(ucb1(1, 1, 4), 3)\n2.665</p>"
    )
    assert unrendered_docstrings(old) == [
        ":class:<code>Board",
        ":mod:<code>connect4_env.rules",
        ">>> round(ucb1(1, 1, 4), 3)\n2.665",
    ]
    new = (
        '<p>the position, <a class="autorefs autorefs-internal" href="#b"><code>Board</code></a></p>' + PROMPT
    )
    assert unrendered_docstrings(new) == []


# The tutorials whose pictures tools/pictures/mcts.py, qlearning.py and alphazero.py draw for legibility
PICTURE_PAGES = ["tutorials/mcts/", "tutorials/qlearning/", "tutorials/alphazero/"]
SMALLEST_TEXT_PX = 12
FONT_SIZE = re.compile(r"font-size(?::\s*|=\")([0-9.]+)")
SVG_SIZE = re.compile(r'<svg[^>]*?\swidth="([0-9.]+)(pt|px)?"[^>]*?\sviewBox="[0-9.-]+ [0-9.-]+ ([0-9.]+)')


def shown_images(base: str, site: Path, page: str) -> list[tuple[str, int, int]]:
    """``(src, shown width, natural width)`` of each image of ``page``, in pixels, as Chromium lays it out in
    a 1280-pixel window (a copy of the page that writes them into its DOM once loaded)."""
    probe = (
        "<script>window.addEventListener('load', () => document.body.setAttribute('data-images', "
        "JSON.stringify([...document.images].map(i => [i.getAttribute('src'), i.width, i.naturalWidth]))))"
        "</script>"
    )
    folder = site / page
    (folder / "probe.html").write_text(
        (folder / "index.html").read_text().replace("</body>", probe + "</body>")
    )
    result = browser(
        "--window-size=1280,900", "--virtual-time-budget=5000", "--dump-dom", base + page + "probe.html"
    )
    assert result.returncode == 0, result.stderr[-2000:]
    found = re.search(r'data-images="([^"]*)"', result.stdout)
    assert found, "the probe page wrote no image sizes"
    return [tuple(image) for image in json.loads(html.unescape(found.group(1)))]


def smallest_text_px(svg: str, shown_width: float) -> float:
    """The smallest font size of an SVG picture, in screen pixels, when it is shown ``shown_width`` wide."""
    size = SVG_SIZE.search(svg)
    assert size, "an SVG picture with a width and a viewBox"
    return min(float(font) for font in FONT_SIZE.findall(svg)) * shown_width / float(size.group(3))


@pytest.mark.parametrize("page", PICTURE_PAGES)
def test_tutorial_pictures_are_legible(site: Path, base: str, page: str) -> None:
    images = [image for image in shown_images(base, site, page) if "img/" in image[0]]
    assert images, "the page's pictures were found"
    small = []
    for src, shown, natural in images:
        path = site / page / src
        if path.suffix == ".svg":
            text_px = smallest_text_px(path.read_text(), shown)
            if text_px < SMALLEST_TEXT_PX - 0.1:  # a pixel's rounding of the shown width
                small.append(f"{src}: {text_px:.1f} px text")
        elif shown < natural:  # a PNG's text can only be read at its own size: shown shrunk, it is smaller
            small.append(f"{src}: shown {shown} px wide, drawn {natural} px wide")
    assert small == []


def test_smallest_text_px() -> None:
    # 9-point text of a 7.1-inch matplotlib SVG (511.2 pt, 681.6 px) at its own width: 12 px; shrunk, less
    svg = '<svg width="511.2pt" height="100pt" viewBox="0 0 511.2 100"><text style="font-size: 9px">a</text>'
    assert smallest_text_px(svg + '<text font-size="10.5">b</text></svg>', 681.6) == pytest.approx(12.0)
    assert smallest_text_px(svg + "</svg>", 511.2) == pytest.approx(9.0)
