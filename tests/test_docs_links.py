"""README stays short, and every relative link in README.md and docs/ reaches a file (and heading) that exists."""

from __future__ import annotations

import re
from pathlib import Path

from helpers.stacks import ROOT

README_MAX_LINES = 100
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
_LINK = re.compile(r"\]\(([^)\s]+)\)")
_FENCE = re.compile(r"^```.*?^```", re.S | re.M)


def anchor(heading: str) -> str:
    """GitHub's anchor of a Markdown heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    text = _FENCE.sub("", path.read_text(encoding="utf-8"))
    return {anchor(m.group(1)) for m in re.finditer(r"^#{1,6} (.+)$", text, flags=re.M)}


def broken_links(path: Path) -> list[str]:
    """The relative links of one Markdown file whose file or heading does not exist."""
    broken = []
    for target in _LINK.findall(_FENCE.sub("", path.read_text(encoding="utf-8"))):
        if re.match(r"^[a-z]+:", target):
            continue
        file_part, _, fragment = target.partition("#")
        linked = (path.parent / file_part).resolve() if file_part else path
        if not linked.exists():
            broken.append(target)
        elif fragment and linked.suffix == ".md" and fragment not in anchors(linked):
            broken.append(target)
    return broken


def test_readme_is_short() -> None:
    count = len((ROOT / "README.md").read_text(encoding="utf-8").splitlines())
    assert count <= README_MAX_LINES, f"README.md has {count} lines; move detail to docs/ (at most {README_MAX_LINES})"


def test_relative_links_resolve() -> None:
    found = {str(p.relative_to(ROOT)): links for p in DOCUMENTS if (links := broken_links(p))}
    assert found == {}


def test_every_doc_is_linked_from_the_readme() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    unlinked = [p.name for p in DOCUMENTS[1:] if f"(docs/{p.name})" not in readme]
    assert unlinked == []


def test_the_link_check_catches_a_missing_file_and_heading(tmp_path: Path) -> None:
    (tmp_path / "b.md").write_text("# Title\n\n## Reachability: where `pulumi up` runs\n", encoding="utf-8")
    page = tmp_path / "a.md"
    page.write_text(
        "[ok](b.md#reachability-where-pulumi-up-runs) [gone](c.md) [no heading](b.md#nope) [web](https://x.y)\n"
        "```\n[inside a fence](nowhere.md)\n```\n",
        encoding="utf-8",
    )
    assert broken_links(page) == ["c.md", "b.md#nope"]
