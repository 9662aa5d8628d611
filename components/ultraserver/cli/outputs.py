"""The files a subcommand writes (--json, --graph, --html, ...): checked before the command works, written after."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from pathlib import Path

from ultraserver.cli.exits import UsageError
from ultraserver.config.files import MAX_STATE_BYTES, read_bytes, special_kind
from ultraserver.problems import ConfigError, Problem

# Text formats only: --graph writes Mermaid or DOT source, never an image (render it with mermaid-cli or dot).
GRAPH_FORMATS = {".mmd": "mermaid", ".mermaid": "mermaid", ".md": "mermaid", ".dot": "dot", ".gv": "dot"}
HTML_FORMATS = {".html": "html", ".htm": "html"}
OUTPUT_KINDS = {"--graph": "Mermaid or DOT text, not an image", "--html": "one self-contained HTML page"}


NAME_MAX = 255
"""The longest file name (bytes) of Linux's and macOS's file systems, when the folder cannot be asked."""


def suffix(path: str) -> str:
    return Path(path).suffix.lower()


def check_output(
    path: str | None,
    formats: Mapping[str, str] | None,
    flag: str,
    earlier: Callable[[bytes], bool] | None,
    *,
    inputs: Mapping[Path, str] | None = None,
    force: bool = False,
) -> None:
    """UsageError unless an output file has a known extension and can be written (checked before the command works).

    ``earlier`` tells whether a file's bytes are an earlier output of this option: an existing file is overwritten
    only when it is empty or such an output (``force`` lifts this), and never when it is one of ``inputs`` (path:
    what the command reads it as), ``force`` or not: --force is for outputs. None: the option appends, keeping what
    the file holds. A directory, a FIFO or any other file that is not a regular one is refused, ``force`` or not:
    writing to a FIFO waits for a reader.
    """
    if not path:
        return
    if formats is not None and suffix(path) not in formats:
        raise UsageError(
            Problem(
                flag, path, f"a file ending in {', '.join(formats)} ({flag} writes {OUTPUT_KINDS[flag]})", "rename it"
            )
        )
    target = Path(path)
    _check_writable(target, path, flag)
    for source, role in (inputs or {}).items():
        if target.exists() and _same_file(source, target):
            read_as = f"a file the command does not read (it reads this one as {role}; --force is for outputs)"
            raise UsageError(Problem(flag, path, read_as, "pick another path"))
    if earlier is not None and not force and target.exists():
        _check_overwrite(target, path, flag, earlier)


def _check_writable(target: Path, path: str, flag: str) -> None:
    """UsageError unless ``target`` is a regular file, or a new one, that can be written in an existing folder."""
    try:
        _check_writable_path(target, path, flag)
    except OSError as err:  # a path the system refuses to look at (too long, a loop of links)
        accepted = f"a path this system accepts ({err.strerror})"
        raise UsageError(Problem(flag, path, accepted, "pick another path")) from None


def _check_writable_path(target: Path, path: str, flag: str) -> None:
    folder = target.parent if str(target.parent) else Path(".")
    known = next((f for f in target.absolute().parents if os.path.isdir(f)), None)
    longest = os.pathconf(known, "PC_NAME_MAX") if known else NAME_MAX
    if any(len(os.fsencode(name)) > longest for name in target.parts):
        names = f"file and folder names of at most {longest} bytes (the file system's limit)"
        raise UsageError(Problem(flag, path, names, "use shorter names"))
    if target.is_dir() or path.endswith(("/", os.sep)):
        raise UsageError(Problem(flag, path, "a file, not a directory", "give a file name"))
    kind = special_kind(target)
    if kind:
        raise UsageError(Problem(flag, path, f"a regular file (this is a {kind})", "pick another path"))
    if not folder.is_dir():
        raise UsageError(
            Problem(
                flag,
                path,
                f"a file in an existing folder, and {str(folder)!r} does not exist",
                "create it or pick another path",
            )
        )
    if not os.access(folder, os.W_OK) or (target.exists() and not os.access(target, os.W_OK)):
        raise UsageError(Problem(flag, path, "a writable path", "pick a writable path"))


def _check_overwrite(target: Path, path: str, flag: str, earlier: Callable[[bytes], bool]) -> None:
    """UsageError when an existing file holds anything but an earlier output."""
    fix = "pick another path, or pass --force to overwrite it"
    try:
        data = read_bytes(target, flag, MAX_STATE_BYTES)
    except ConfigError:  # unreadable or larger than any output
        data = None
    if data is None or (data.strip() and not earlier(data)):
        raise UsageError(Problem(flag, path, f"a new file or an earlier {flag} output (this file is neither)", fix))


def json_output(*keys: str) -> Callable[[bytes], bool]:
    """Whether a file's bytes are a JSON object with ``keys``: an earlier output of a ``--json`` that writes them."""

    def earlier(data: bytes) -> bool:
        try:
            document = json.loads(data)
        except ValueError:
            return False
        return isinstance(document, dict) and set(keys) <= document.keys()

    return earlier


def _same_file(one: Path, other: Path) -> bool:
    try:
        return os.path.samefile(one, other)
    except OSError:  # missing, or a name too long to look up
        return False


def write_output(path: str, text: str, flag: str, *, append: bool = False) -> None:
    """Write (or append to) an output file ``check_output`` let through; UsageError naming the option if it still
    cannot be."""
    try:
        with open(path, "a" if append else "w", encoding="utf-8") as out:
            out.write(text)
    except OSError as err:
        raise UsageError(Problem(flag, path, "a path that can be written", f"pick another ({err.strerror})")) from None
