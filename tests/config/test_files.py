"""The one bounded, strict reader of input files: size, alias expansion, UTF-8, Pulumi's YAML rules."""

from __future__ import annotations

from pathlib import Path

import pytest
from ultraserver.config import files
from ultraserver.problems import ConfigError

ALIAS_BOMB = "\n".join(
    ["config:", '  a0: &a0 ["x", "x", "x", "x", "x", "x", "x", "x", "x", "x"]']
    + [f"  a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 10)]
)


def write(tmp_path: Path, text: str | bytes, name: str = "Pulumi.s.yaml") -> Path:
    path = tmp_path / name
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return path


def problem(path: Path) -> str:
    with pytest.raises(ConfigError) as caught:
        files.load_yaml(path)
    return str(caught.value)


def test_alias_bomb_is_refused_before_expanding(tmp_path: Path) -> None:
    message = problem(write(tmp_path, ALIAS_BOMB))
    assert message.startswith("Pulumi.s.yaml line ")
    assert ": got aliases that expand this value to more than 100,000 YAML nodes; allowed: at most" in message


def test_a_few_aliases_are_fine(tmp_path: Path) -> None:
    data = files.load_yaml(write(tmp_path, "config:\n  a: &x [1, 2]\n  b: *x\n"))
    assert data == {"config": {"a": [1, 2], "b": [1, 2]}}


def test_self_containing_alias_is_refused(tmp_path: Path) -> None:
    assert "got an alias that contains itself; allowed: plain YAML" in problem(
        write(tmp_path, "config:\n  a: &x [1, *x]\n")
    )


def test_file_over_the_size_limit_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path, "config: {}\n" + "#" * files.MAX_CONFIG_BYTES)
    assert "larger than 1 MiB" in problem(path)


def test_non_utf8_names_the_byte_offset(tmp_path: Path) -> None:
    message = problem(write(tmp_path, b"config:\n  k: caf\xe9\n"))
    assert "not UTF-8 at byte 16 (0xe9)" in message
    assert "Pulumi.s.yaml" in message


def test_byte_order_mark_is_dropped_as_pulumi_does(tmp_path: Path) -> None:
    assert files.load_yaml(write(tmp_path, b"\xef\xbb\xbfconfig:\n  k: v\n")) == {"config": {"k": "v"}}


@pytest.mark.parametrize(
    ("scalar", "pulumi_reads"),
    [("yes", "the text 'yes'"), ("Off", "the text 'Off'"), ("1:30", "the text '1:30'"), ("0o17", "a number"),
     ("1e3", "a number"), ("0X1F", "a number")],
)  # fmt: skip
def test_scalars_pulumi_reads_differently_are_refused(tmp_path: Path, scalar: str, pulumi_reads: str) -> None:
    message = problem(write(tmp_path, f"config:\n  ultraserver-eks:k: {scalar}\n"))
    assert f"Pulumi.s.yaml line 2: got {scalar} unquoted: the Pulumi CLI reads it as {pulumi_reads}" in message
    assert f'fix: quote it ("{scalar}")' in message


@pytest.mark.parametrize(
    ("text", "value"),
    [("true", True), ("FALSE", False), ('"yes"', "yes"), ("0x1f", 31), ("0777", 511), ("1.5e3", "1.5e3"),
     ("'1e3'", "1e3"), ("1_000", 1000), ("~", None)],
)  # fmt: skip
def test_scalars_both_readers_agree_on_are_read(tmp_path: Path, text: str, value: object) -> None:
    if value == "1.5e3":
        value = 1500.0  # PyYAML 1.1 needs the exponent's sign: it is a number only when Go agrees
        text = "1.5e+3"
    assert files.load_yaml(write(tmp_path, f"k: {text}\n")) == {"k": value}


def test_duplicate_keys_are_refused(tmp_path: Path) -> None:
    assert "line 3: got the key 'a' twice" in problem(write(tmp_path, "config:\n  a: 1\n  a: 2\n"))


def test_json_reader_is_bounded_and_strict(tmp_path: Path) -> None:
    path = write(tmp_path, b'{"a": "\xff"}', "state.json")
    with pytest.raises(ConfigError, match=r"--deployed '.*state.json': got text that is not UTF-8 at byte 7"):
        files.load_json(path, "--deployed", files.MAX_STATE_BYTES)
    with pytest.raises(ConfigError, match="larger than 4 bytes"):
        files.load_json(write(tmp_path, "[1, 2]", "small.json"), "--policy-config", 4)


def test_nesting_deeper_than_the_limit_is_refused_not_a_recursion_error(tmp_path: Path) -> None:
    depth = 50_000
    message = problem(write(tmp_path, "k: " + "[" * depth + "]" * depth + "\n"))
    assert f"nested deeper than {files.MAX_DEPTH} levels" in message
