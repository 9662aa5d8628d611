"""Each fact pattern has one home: a regex for an AWS identifier is written only in facts/aws/aws_ids.py."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from ultraserver.facts.aws import aws_ids
from ultraserver.facts.hardware import efa, ultraservers

PACKAGE = Path(__file__).resolve().parents[1] / "components" / "ultraserver"

# Fragments only a regex for an AWS identifier contains; each names the home it belongs to.
AWS_ID_FRAGMENTS = (
    "[a-z]{2}(-[a-z]+)",  # region
    "[a-z]{2}(?:-[a-z]+)",  # region, non-capturing
    "cr-[0-9a-f]",  # capacity reservation ID
    "ami-[0-9a-f]",
    "vpc-[0-9a-f]",
    "subnet-[0-9a-f]",
    ":resource-groups:",
    ":sns:",
    ":iam::",
    r"\d{12}",  # account
)
# An ARN built or described in prose (arn:aws:iam::aws:policy/...) is not a pattern; a regex has these.
REGEX_SYNTAX = ("[", "\\d", "(?")
HOMES = {PACKAGE / "facts" / "aws" / "aws_ids.py"}


def string_constants(path: Path) -> list[tuple[int, str]]:
    """Every string literal in a module, with its line."""
    tree = ast.parse(path.read_text(), filename=str(path))
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    ]


def misplaced(paths: list[Path], fragments: tuple[str, ...]) -> list[str]:
    """Where a fragment of a fact pattern is written outside its home."""
    return [
        f"{path.name}:{line}: {fragment!r}"
        for path in paths
        if path not in HOMES
        for line, text in string_constants(path)
        for fragment in fragments
        if fragment in text and any(syntax in text for syntax in REGEX_SYNTAX)
    ]


def test_aws_identifier_patterns_live_only_in_facts_aws_ids() -> None:
    assert misplaced(sorted(PACKAGE.rglob("*.py")), AWS_ID_FRAGMENTS) == []


# UltraServer sizes (nodes 9/18, GPUs 36/72) live in facts/hardware/ultraservers.py; drawings use pixel offsets.
SIZE_LITERALS = (18, 72)
SIZE_HOMES = {
    PACKAGE / "facts" / "hardware" / "ultraservers.py",
    PACKAGE / "offline" / "svg.py",
    PACKAGE / "offline" / "pairing_svg.py",
}


def size_literals(paths: list[Path]) -> list[str]:
    """Where an UltraServer size is written as a number outside its home."""
    return [
        f"{path.name}:{node.lineno}: {node.value}"
        for path in paths
        if path not in SIZE_HOMES
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Constant) and type(node.value) is int and node.value in SIZE_LITERALS
    ]


def test_ultraserver_sizes_are_written_only_in_facts_ultraservers() -> None:
    assert size_literals(sorted(PACKAGE.rglob("*.py"))) == []


def test_the_size_scan_finds_a_literal(tmp_path: Path) -> None:
    stray = tmp_path / "stray.py"
    stray.write_text("MAX_NODES = 18\n")
    assert size_literals([stray]) == ["stray.py:1: 18"]


def test_the_type_table_is_what_the_catalog_and_eks_say() -> None:
    x72, x36 = ultraservers.TYPES["u-p6e-gb200x72"], ultraservers.TYPES["u-p6e-gb200x36"]
    assert (x72.nodes, x72.gpus, x36.nodes, x36.gpus) == (18, 72, 9, 36)
    assert x72.network_cards == len(efa.instance_facts(x72.instance_type)["cards"])


def test_the_scan_finds_a_pattern_written_elsewhere(tmp_path: Path) -> None:
    stray = tmp_path / "stray.py"
    stray.write_text('import re\n\nRID = re.compile(r"^cr-[0-9a-f]{17}$")\n')
    assert misplaced([stray], AWS_ID_FRAGMENTS) == ["stray.py:3: 'cr-[0-9a-f]'"]


@pytest.mark.parametrize(
    ("pattern", "good", "bad"),
    [
        (aws_ids.REGION, "us-east-1", "us-east-1a"),
        (aws_ids.ZONE, "us-east-1-dfw-2a", "us-east"),
        (aws_ids.LOCAL_ZONE, "us-east-1-dfw-2a", "us-east-1a"),
        (aws_ids.RESERVATION_ID, "cr-0123456789abcdef0", "cr-0123456789ABCDEF0"),
        (aws_ids.RESOURCE_GROUP_ARN, "arn:aws:resource-groups:us-east-1:123456789012:group/gb200", "arn:aws:x"),
        (aws_ids.SNS_TOPIC_ARN, "arn:aws:sns:us-east-1:123456789012:alerts.fifo", "arn:aws:sns:us-east-1:1:a"),
        (aws_ids.AMI_ID, "ami-0123456789abcdef0", "ami-0123"),
    ],
)
def test_patterns_match_whole_identifiers_only(pattern: str, good: str, bad: str) -> None:
    assert aws_ids.matches(pattern, good)
    assert not aws_ids.matches(pattern, bad)
    assert not aws_ids.matches(pattern, f" {good}")
    assert not aws_ids.matches(pattern, None)


def test_the_gb200_instance_family_is_named_only_in_facts() -> None:
    """Logic reads the UltraServer catalog (facts/hardware/ultraservers.py, facts/hardware/instances.py), so a new
    UltraServer type
    touches the catalog and its data only: the instance family is named nowhere else, not even in a comment."""
    paths = [p for p in sorted(PACKAGE.rglob("*.py")) if "facts" not in p.relative_to(PACKAGE).parts]
    found = [
        f"{path.relative_to(PACKAGE)}:{number}"
        for path in paths
        for number, line in enumerate(path.read_text().splitlines(), start=1)
        if "p6e-gb200" in line
    ]
    assert found == []
