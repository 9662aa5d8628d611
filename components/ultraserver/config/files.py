"""The one reader of files the toolkit is given: bounded in size, nesting and alias expansion, strictly UTF-8.

Every input file (stack files and Pulumi.yaml, ``--deployed``, ``--policy-config``, ``--kubeconfig``, the logs
``verify --from-file`` judges) goes through here, so a huge file, a YAML alias bomb or bad bytes ends at once with
a ConfigError naming the file (exit 2), never a long spin or an internal error.

YAML is read the way the Pulumi CLI reads a stack file, or refused where the two would differ. Pulumi v3.259.0
decodes stack files with gopkg.in/yaml.v3 into ``any`` (sdk/go/common/encoding/marshal.go:27,111-115;
sdk/go/common/workspace/loaders.go:181) after dropping a UTF-8 byte-order mark (loaders.go:159). yaml.v3
v3.0.1 resolves plain scalars by YAML 1.2 rules: only true/false are booleans (resolve.go:52-53; README: "YAML 1.1
bools (yes/no, on/off) are supported as long as they are being decoded into a typed bool value. Otherwise they
behave as a string"), integers by Go's ``strconv.ParseInt(s, 0, 64)`` (resolve.go:192, so 0o17, 0X1F and 0777
are numbers), floats by ``strconv.ParseFloat`` (1e3 is a number), no base-60 numbers (resolve.go:165), and
timestamps become ``time.Time`` (resolve.go:184-187), which Pulumi passes on as Go's ``Time.String()`` text
(sdk/go/common/resource/config/object.go:490-491). PyYAML reads YAML 1.1: ``yes`` is true, ``1:30`` is 90, ``0o17``
and ``1e3`` are text. Each such scalar is refused here with "quote it" (timestamps are refused per stack key by
offline.project.stack_config). Checked 2026-11-25.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import stat
from collections.abc import Mapping
from datetime import date
from pathlib import Path
from typing import Any

import yaml

from ultraserver.problems import ConfigError, Described, Problem

MAX_CONFIG_BYTES = 2**20
"""Largest stack file, Pulumi.yaml or policy config (1 MiB; a shipped stack file is under 10 KiB)."""
MAX_STATE_BYTES = 256 * 2**20
"""Largest --deployed file (256 MiB; `pulumi stack export` of a 1,000-UltraServer fleet is tens of MiB)."""
MAX_LOG_BYTES = 16 * 2**20
"""Largest log read (16 MiB; a 2-node nvbandwidth or a 16-size nccl-tests log is a few hundred KiB)."""
MAX_ALIAS_NODES = 100_000
"""Most YAML nodes aliases may add beyond those written out. yaml.v3 (the Pulumi CLI's reader) refuses "excessive
aliasing" by a ratio of alias-driven to all decodes (v3.0.1 decode.go:455-491); a fixed cap is simpler and no real
stack comes near it (a stack file has hundreds of nodes)."""

MAX_DEPTH = 64
"""Deepest YAML nesting read (a stack file nests under 10 levels). yaml.v3 stops at 10,000 (v3.0.1 scannerc.go:956);
PyYAML's composer recurses per level, so a much deeper file would exhaust Python's stack first."""

_KINDS = {
    stat.S_IFIFO: "FIFO (named pipe)",
    stat.S_IFDIR: "directory",
    stat.S_IFCHR: "character device",
    stat.S_IFBLK: "block device",
    stat.S_IFSOCK: "socket",
}
_MERGE_TAG = "tag:yaml.org,2002:merge"
_YAML11_BOOLS = {"yes", "no", "on", "off"}  # PyYAML's 1.1 booleans besides true/false
# Plain scalars Go reads as numbers that PyYAML keeps as text: 0o/0O/0B/0X prefixes and exponents without a dot.
_GO_NUMBER = re.compile(r"[-+]?(0[oObBxX][0-9a-fA-F_]+|([0-9][0-9_]*(\.[0-9]*)?|\.[0-9]+)[eE][-+]?[0-9]+)")


def special_kind(path: Path) -> str:
    """What ``path`` is when it exists but is no regular file ("FIFO (named pipe)", "directory", ...); else empty.

    Read from its status without opening it: opening a FIFO with no reader or writer on the other end waits forever.
    """
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):  # missing, unreachable, or a name the system cannot take
        return ""
    return _kind_of(mode)


def _kind_of(mode: int) -> str:
    """The kind of file a status mode names when it is no regular file; empty for a regular file."""
    kind = stat.S_IFMT(mode)
    return "" if kind == stat.S_IFREG else _KINDS.get(kind, "special file")


def read_bytes(path: Path, what: str, limit: int) -> bytes:
    """The bytes of ``path``, or ConfigError when it cannot be read or is larger than ``limit``."""
    try:
        # Opened without blocking and checked before reading: a FIFO with no writer would wait forever.
        with open(os.open(path, os.O_RDONLY | os.O_NONBLOCK), "rb") as handle:
            kind = _kind_of(os.fstat(handle.fileno()).st_mode)
            if kind:
                raise ConfigError(
                    Problem(
                        _label(what, path),
                        Described(f"a {kind}, not a regular file"),
                        "a regular file",
                        "write the content to a file first and pass that file",
                    )
                )
            data = handle.read(limit + 1)
    except OSError as err:
        raise ConfigError(
            Problem(
                _label(what, path),
                Described(f"a file that cannot be read ({err.strerror})"),
                "a readable file",
                "pass an existing file",
            )
        ) from None
    if len(data) > limit:
        raise ConfigError(
            Problem(
                _label(what, path),
                Described(f"a file larger than {_size(limit)}"),
                f"at most {_size(limit)}",
                "pass the right file, or cut it down",
            )
        )
    return data


def read_text(path: Path, what: str, limit: int = MAX_CONFIG_BYTES) -> str:
    """UTF-8 text of ``path`` (a leading byte-order mark dropped, as Pulumi does), or ConfigError naming the offset."""
    data = read_bytes(path, what, limit)
    try:
        return data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as err:
        raise ConfigError(
            Problem(
                _label(what, path),
                Described(f"text that is not UTF-8 at byte {err.start} (0x{data[err.start]:02x})"),
                "UTF-8 text",
                "save the file as UTF-8",
            )
        ) from None


def load_json(path: Path, what: str, limit: int = MAX_CONFIG_BYTES, fix: str = "correct the file") -> Any:
    """The JSON document in ``path``, or ConfigError naming the file, what is wrong and ``fix`` (for invalid JSON)."""
    text = read_text(path, what, limit)
    try:
        return json.loads(text)
    except ValueError as err:
        raise ConfigError(
            Problem(_label(what, path), Described(f"text that is not valid JSON ({err})"), "a JSON document", fix)
        ) from None


def load_yaml(path: Path, what: str = "", pulumi: bool = True) -> Any:
    """The YAML document in ``path`` ({} when empty), or ConfigError; messages start with the file's name.

    Refused: invalid YAML and aliases that add more than MAX_ALIAS_NODES nodes or contain themselves. With
    ``pulumi`` (a Pulumi project or stack file) also duplicate keys and plain scalars PyYAML and Pulumi read
    differently; other files (a kubeconfig) are read by other tools' rules, so PyYAML's are kept for them.
    """
    name = _label(what, path) if what else Path(path).name
    text = read_text(path, what)
    try:
        loader = _PulumiLoader(text) if pulumi else _BoundedLoader(text)
    except yaml.reader.ReaderError as err:  # a character YAML forbids anywhere (NUL, most other C0 controls)
        raise ConfigError(
            Problem(
                f"{name} line {text.count(chr(10), 0, err.position) + 1}",
                Described(f"the character U+{err.character:04X}, which YAML does not allow"),
                "YAML text (no NUL or other control characters except tab and line breaks)",
                "remove the character",
            )
        ) from None
    try:
        node = loader.get_single_node()
        if node is None:
            return {}
        _check_aliases(node)
        return loader.construct_document(node) or {}
    except ConfigError as err:
        raise ConfigError([dataclasses.replace(p, key=f"{name} {p.key}") for p in err.items]) from None
    except yaml.YAMLError as err:
        raise ConfigError(
            Problem(name, Described(f"text that is not valid YAML ({err})"), "a YAML document", "correct the file")
        ) from None
    finally:
        loader.dispose()


def _label(what: str, path: Path) -> str:
    """How a message names the file: the option and the path given, or the path alone."""
    return f"{what} {str(path)!r}" if what else str(path)


def _size(limit: int) -> str:
    return f"{limit // 2**20} MiB" if limit >= 2**20 else f"{limit} bytes"


def _line(node: yaml.Node) -> str:
    return f"line {node.start_mark.line + 1}"


def _check_aliases(root: yaml.Node) -> None:
    """ConfigError when aliases expand the document by more than MAX_ALIAS_NODES nodes, or into itself."""
    sizes: dict[int, int] = {}
    open_nodes: set[int] = set()
    written = 0

    def expanded(node: yaml.Node) -> int:
        nonlocal written
        if id(node) in sizes:
            return sizes[id(node)]
        if id(node) in open_nodes:
            raise ConfigError(
                Problem(_line(node), Described("an alias that contains itself"), "plain YAML", "remove the alias")
            )
        written += 1
        open_nodes.add(id(node))
        children = node.value if isinstance(node, yaml.SequenceNode) else []
        if isinstance(node, yaml.MappingNode):
            children = [n for pair in node.value for n in pair]
        size = 1 + sum(expanded(child) for child in children)
        open_nodes.discard(id(node))
        if size - written > MAX_ALIAS_NODES:
            raise ConfigError(
                Problem(
                    _line(node),
                    Described(f"aliases that expand this value to more than {MAX_ALIAS_NODES:,} YAML nodes"),
                    f"at most {MAX_ALIAS_NODES:,} nodes added by aliases",
                    "write the value out without nested aliases",
                )
            )
        sizes[id(node)] = size
        return size

    expanded(root)


class _BoundedLoader(yaml.SafeLoader):
    """A safe loader that refuses nesting deeper than MAX_DEPTH."""

    depth = 0

    def compose_node(self, parent: yaml.Node | None, index: int) -> yaml.Node | None:
        self.depth += 1
        try:
            if self.depth > MAX_DEPTH:
                raise ConfigError(
                    Problem(
                        f"line {self.peek_event().start_mark.line + 1}",
                        Described(f"a value nested deeper than {MAX_DEPTH} levels"),
                        f"at most {MAX_DEPTH}",
                        "flatten the value",
                    )
                )
            return super().compose_node(parent, index)
        finally:
            self.depth -= 1


class _PulumiLoader(_BoundedLoader):
    """A bounded loader that refuses duplicate keys (as Pulumi does) and scalars yaml.v3 would read differently."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            if key_node.tag == _MERGE_TAG:  # <<: *anchor merges keys (yaml.v3 does too); the base loader expands it
                continue
            key = self.construct_object(key_node, deep=deep)
            if isinstance(key, (str, int, float, bool)) and key in seen:
                raise ConfigError(
                    Problem(
                        _line(key_node),
                        Described(f"the key {key!r} twice"),
                        "each key once (Pulumi refuses duplicate keys)",
                        "keep one of them",
                    )
                )
            if isinstance(key, (str, int, float, bool)):
                seen.add(key)
        return super().construct_mapping(node, deep=deep)


def _ambiguous(node: yaml.ScalarNode, pulumi_reads: str, pyyaml_reads: str) -> ConfigError:
    return ConfigError(
        Problem(
            _line(node),
            Described(
                f"{node.value} unquoted: the Pulumi CLI reads it as {pulumi_reads} (YAML 1.2), older YAML readers "
                f"as {pyyaml_reads}"
            ),
            "an unambiguous value",
            f'quote it ("{node.value}") for text'
            + (", or write true or false" if pulumi_reads.startswith("the text") and "true" in pyyaml_reads else ""),
        )
    )


def _construct_bool(loader: _PulumiLoader, node: yaml.ScalarNode) -> bool:
    if node.value.lower() in _YAML11_BOOLS:
        value = yaml.SafeLoader.construct_yaml_bool(loader, node)
        raise _ambiguous(node, f"the text {node.value!r}", f"{str(value).lower()} (YAML 1.1)")
    return bool(yaml.SafeLoader.construct_yaml_bool(loader, node))


def _construct_int(loader: _PulumiLoader, node: yaml.ScalarNode) -> int:
    value = int(yaml.SafeLoader.construct_yaml_int(loader, node))
    if ":" in node.value:
        raise _ambiguous(node, f"the text {node.value!r}", f"the base-60 number {value} (YAML 1.1)")
    return value


def _construct_str(loader: _PulumiLoader, node: yaml.ScalarNode) -> str:
    value = str(yaml.SafeLoader.construct_yaml_str(loader, node))
    if node.style is None and _GO_NUMBER.fullmatch(value):
        raise _ambiguous(node, "a number", f"the text {value!r} (YAML 1.1)")
    return value


_PulumiLoader.add_constructor("tag:yaml.org,2002:bool", _construct_bool)
_PulumiLoader.add_constructor("tag:yaml.org,2002:int", _construct_int)
_PulumiLoader.add_constructor("tag:yaml.org,2002:str", _construct_str)


SECRET_PLACEHOLDER = "offline-placeholder-secret"
"""What a Pulumi secret reads as offline: the backend that decrypts it is never asked."""


def without_secrets(value: Any, inside: frozenset[int] = frozenset()) -> tuple[Any, bool]:
    """``value`` with every Pulumi secret in it replaced by SECRET_PLACEHOLDER, and whether it held one.

    A secret is a mapping whose only key is ``secure`` with a text value, at the top of a config value or anywhere
    inside an object or list: Pulumi v3.259.0 sdk/go/common/resource/config/object.go reads such a mapping as a
    secure value wherever it appears (read 2026-11-27). A self-containing alias ends the walk.
    """
    if isinstance(value, Mapping) and set(value) == {"secure"} and isinstance(value["secure"], str):
        return SECRET_PLACEHOLDER, True
    if id(value) in inside or not isinstance(value, (Mapping, list)):
        return value, False
    inside = inside | {id(value)}
    pairs = [
        (k, without_secrets(v, inside)) for k, v in (value.items() if isinstance(value, Mapping) else enumerate(value))
    ]
    found = any(secret for _, (_, secret) in pairs)
    if not found:
        return value, False
    if isinstance(value, Mapping):
        return {k: v for k, (v, _) in pairs}, True
    return [v for _, (v, _) in pairs], True


def timestamps(value: Any, where: str = "", inside: frozenset[int] = frozenset()) -> list[tuple[str, date]]:
    """(path, value) of every unquoted YAML timestamp inside a config value (a self-containing alias ends the walk)."""
    if isinstance(value, date):
        return [(where, value)]
    if id(value) in inside:
        return []
    inside = inside | {id(value)}
    if isinstance(value, Mapping):
        return [t for k, v in value.items() for t in timestamps(v, f"{where}.{k}", inside)]
    if isinstance(value, list):
        return [t for i, v in enumerate(value) for t in timestamps(v, f"{where}[{i}]", inside)]
    return []


def timestamp_problems(full: str, value: Any) -> list[Problem]:
    """A value YAML read as a timestamp (unquoted time or date) where the program expects text."""
    return [
        Problem(
            f"{full}{where}",
            moment,
            "a string",
            f'quote it: "{moment.isoformat()}" (YAML reads unquoted times and dates as timestamps)',
        )
        for where, moment in timestamps(value)
    ]
