"""README stays short; every relative link in README.md and docs/, and every pointer to README.md or docs/ (a file, a
#anchor or a quoted heading) in the docs, workflows, stack files, scripts and code comments, reaches what exists."""

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


# An in-repo pointer written in prose: README.md#anchor, docs/x.md#anchor, docs/x.md "Heading" or docs/x.md, Heading.
_POINTER = re.compile(r'(README(?:\.md)?|docs/[\w-]+\.md)(?:#([\w-]+)|,? "([^"]+)"|, ([A-Z][^.;)"]*))?')
_UPSTREAM = re.compile(r"[\w-] $")  # "chart README", "aws-node-termination-handler README": another project's
_THEIRS = re.compile(r"(\b[Ii]ts|[\w.]*[-/][\w./-]*) $")  # "its docs/x.md", "owner/repo docs/x.md": another project's
POINTER_SOURCES = sorted(
    {
        *DOCUMENTS,
        *(ROOT / ".github" / "workflows").glob("*.yml"),
        *(ROOT / "components").rglob("*.py"),
        *(ROOT / "scripts").glob("*.py"),
        *(ROOT / "stacks").glob("*.yaml"),
        *(ROOT / "examples").rglob("*.py"),
        *(ROOT / "examples").rglob("*.yaml"),
        *(ROOT / "policies").rglob("*.py"),
        *(ROOT / "kubernetes-layer").rglob("*.py"),
    }
)


def headings(path: Path) -> list[str]:
    text = _FENCE.sub("", path.read_text(encoding="utf-8"))
    return [m.group(1).replace("`", "").strip() for m in re.finditer(r"^#{1,6} (.+)$", text, flags=re.M)]


def broken_pointers(path: Path, root: Path = ROOT) -> list[str]:
    """The prose pointers of one file to README.md or docs/ whose file, anchor or heading does not exist."""
    broken = []
    for line in path.read_text(encoding="utf-8").splitlines():
        for match in _POINTER.finditer(line):
            name, fragment, quoted, unquoted = match.groups()
            before = line[: match.start()]
            after = line[match.end() :]
            if name.startswith("README") and _UPSTREAM.search(before) or _THEIRS.search(before):
                continue  # another project's file
            if before.endswith(("/", "](")):
                continue  # another project's README, a longer path, or a Markdown link (checked above)
            if re.match(r"(:[0-9]|`? at tag )", after):
                continue  # an upstream file cited at a line or tag (docs/prerequisites.md:41, at tag v0.4.1)
            target = root / ("README.md" if name.startswith("README") else name)
            title = (quoted or unquoted or "").replace("`", "").strip()
            if not target.exists():
                broken.append(match.group(0))
            elif fragment and fragment not in anchors(target):
                broken.append(match.group(0))
            elif title and not any(h.startswith(title) or title.startswith(h) for h in headings(target)):
                broken.append(match.group(0))
    return broken


def test_pointers_in_docs_workflows_and_comments_resolve() -> None:
    broken = {str(path.relative_to(ROOT)): found for path in POINTER_SOURCES if (found := broken_pointers(path))}
    assert broken == {}


def test_the_pointer_check_catches_moved_sections(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "deploy.md").write_text("# Deploy\n\n## Reachability: where `pulumi up` runs\n")
    (tmp_path / "README.md").write_text("# ultraserver\n\n## Set up\n")
    page = tmp_path / "workflow.yml"
    page.write_text(
        '# runner (docs/deploy.md "Reachability"), see docs/deploy.md#reachability-where-pulumi-up-runs\n'
        '# gone: README "Reachability", docs/deploy.md#nope, docs/gone.md, docs/deploy.md, Upgrading GPU nodes\n'
        '# not ours: chart README, "Upgrading Chart", docs/upgrade.md:12, `docs/upgrade.md` at tag v0.4.1\n'
        "# not ours either: its docs/x.md, aws/amazon-vpc-cni-k8s docs/y.md\n",
        encoding="utf-8",
    )
    assert broken_pointers(page, tmp_path) == [
        'README "Reachability"',
        "docs/deploy.md#nope",
        "docs/gone.md",
        "docs/deploy.md, Upgrading GPU nodes",
    ]
