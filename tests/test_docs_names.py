"""Names in prose reach what exists: every dotted ``ultraserver.…`` name, every ``*.py`` path and every
``Class(arg=…)`` example in README.md, docs/ and the package's docstrings (module, class, function and field ones).

The tables between markers are regenerated from the code (test_component_docs.py); this holds the hand-written text
around them to the same code. A signature-like example (``Class(a, b, c=60)``: bare parameter names, then keywords)
also states defaults, which must be the code's.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import importlib.util
import inspect
import re
import sysconfig
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.stacks import ROOT
from ultraserver.facts.capacity.capacity_blocks import DEFAULT_SCALE_DOWN_LEAD_MINUTES

PACKAGE = ROOT / "components" / "ultraserver"
SITE = Path(sysconfig.get_paths()["purelib"])
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
_SKIP_DIRS = {".git", ".venv", ".ci-venv", "node_modules", "__pycache__"}
REPO_FILES = [
    p for p in ROOT.rglob("*.py") if not _SKIP_DIRS & set(p.relative_to(ROOT).parts) and "egg-info" not in str(p)
]

DOTTED = re.compile(r"(?<![\w./-])ultraserver(?:\.[A-Za-z_]\w*)+(?![\w/-])")
"""``ultraserver.config.settings.Settings``; not the label domain ``ultraserver.io/…`` nor a longer file name."""
PY_PATH = re.compile(r"(?<![\w./-])([\w./-]*\w\.py)\b(?![:@]\d|`? at )")
"""``resources/platform.py``; not an upstream file cited at a line or tag (``vars.py:33``, ``x.py at v1``)."""
_REPOSITORY = re.compile(r"\b[\w.-]+/[\w.-]+ `?$")
"""An ``owner/repo`` just before a path: a file of another project's repository (``cloudtools/awacs awacs/ec2.py``)."""
CALL = re.compile(r"\b([A-Z]\w*)\(([^()]*)\)")
KEYWORD = re.compile(r"(?:^|,)\s*(\w+)\s*=\s*([^,]*)")


def docstrings(path: Path) -> Iterator[str]:
    """A module's docstrings: module, classes, functions, and the string under each (annotated) assignment."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            text = ast.get_docstring(node, clean=False)
            if text:
                yield text
        if isinstance(node, ast.Module | ast.ClassDef):
            for first, second in zip(node.body, node.body[1:], strict=False):
                if (
                    isinstance(first, ast.AnnAssign | ast.Assign)
                    and isinstance(second, ast.Expr)
                    and isinstance(second.value, ast.Constant)
                    and isinstance(second.value.value, str)
                ):
                    yield second.value.value


def texts() -> list[tuple[str, str]]:
    """(where, text) of every document and docstring the test reads."""
    found = [(str(p.relative_to(ROOT)), p.read_text(encoding="utf-8")) for p in DOCUMENTS]
    for path in sorted(PACKAGE.rglob("*.py")):
        found += [(str(path.relative_to(ROOT)), text) for text in docstrings(path)]
    return found


TEXTS = texts()
_MISSING = object()


def member(owner: Any, name: str) -> Any:
    """An attribute, or a field a model or dataclass declares without a class attribute; _MISSING when neither."""
    try:
        return getattr(owner, name)
    except AttributeError:
        pass
    fields = {**getattr(owner, "model_fields", {}), **getattr(owner, "__dataclass_fields__", {})}
    return fields[name] if name in fields else _MISSING


def resolves(dotted: str) -> bool:
    """Whether a dotted name is a module of ours, or an attribute (at any depth) of the longest one it starts with."""
    parts = dotted.split(".")
    for end in range(len(parts), 0, -1):
        try:
            found: Any = importlib.import_module(".".join(parts[:end]))
        except ModuleNotFoundError:
            continue
        for name in parts[end:]:
            found = member(found, name)
            if found is _MISSING:
                return False
        return True
    return False


def py_paths(text: str) -> list[str]:
    """The ``*.py`` paths of a text, but those cited in another project's repository."""
    return [m.group(1) for m in PY_PATH.finditer(text) if not _REPOSITORY.search(text[: m.start()])]


def third_party(path: str) -> bool:
    """A path that ends a file of an installed package (``pulumi_aws/config/vars.py``, ``runtime/rpc.py`` of pulumi,
    ``sdk/python/lib/pulumi/runtime/rpc.py`` as pulumi's repository has it): another project's file."""
    parts = path.removeprefix("./").split("/")
    for start in range(len(parts) - 1):
        tail = "/".join(parts[start:])
        if (SITE / tail).is_file() or next(SITE.glob(f"*/{tail}"), None) is not None:
            return True
    return False


def path_exists(path: str, files: list[Path] = REPO_FILES, root: Path = ROOT) -> bool:
    """Whether a ``*.py`` path names a file of the repository: from the root, the package or the tests, or as the
    end of a file's path; a bare file name anywhere."""
    if "/" not in path:
        return any(f.name == path for f in files)
    clean = path.removeprefix("./")
    bases = (root, root / "components", root / "components" / "ultraserver", root / "tests")
    return any((base / clean).is_file() for base in bases) or any(str(f).endswith(f"/{clean}") for f in files)


def classes() -> dict[str, list[type]]:
    """Every class the package defines, by name (a name may be defined twice)."""
    found: dict[str, list[type]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        module_name = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts).removesuffix(".__init__")
        names = [n.name for n in ast.parse(path.read_text(encoding="utf-8")).body if isinstance(n, ast.ClassDef)]
        if names:
            module = importlib.import_module(module_name)
            for name in names:
                found.setdefault(name, []).append(getattr(module, name))
    return found


def parameters(cls: type) -> dict[str, Any]:
    """What a class takes by keyword, with each one's default (``inspect.Parameter.empty`` when required)."""
    found: dict[str, Any] = {}
    for name, field in getattr(cls, "model_fields", {}).items():
        default = inspect.Parameter.empty if field.is_required() else field.default
        found[name] = default
        if field.alias:
            found[field.alias] = default
    if dataclasses.is_dataclass(cls):
        for field in dataclasses.fields(cls):
            found[field.name] = inspect.Parameter.empty if field.default is dataclasses.MISSING else field.default
    if not found:
        try:
            signature = inspect.signature(cls)
        except (TypeError, ValueError):
            return {}
        found = {n: p.default for n, p in signature.parameters.items() if p.kind is not p.VAR_KEYWORD}
    return found


def call_problems(text: str, known: dict[str, list[type]]) -> list[str]:
    """What is wrong with each ``Class(arg=…)`` example of a class of ours in ``text``."""
    found = []
    for match in CALL.finditer(text):
        name, inside = match.groups()
        if name not in known or "=" not in inside:
            continue
        options = [parameters(cls) for cls in known[name]]
        keywords = KEYWORD.findall(inside)
        positional = [a.strip() for a in inside.split(",") if a.strip() and "=" not in a]
        for keyword, value in keywords:
            if not any(keyword in taken for taken in options):
                found.append(f"{match.group(0)}: {name} takes no {keyword}")
            elif positional and all(a in taken for taken in options for a in positional):
                # A signature: its keywords show defaults.
                default = next(taken[keyword] for taken in options if keyword in taken)
                try:
                    written = ast.literal_eval(value.strip())
                except (ValueError, SyntaxError):
                    continue
                if written != default:
                    found.append(f"{match.group(0)}: {name}'s {keyword} defaults to {default!r}")
    return found


def test_every_dotted_name_resolves() -> None:
    broken = sorted({(where, name) for where, text in TEXTS for name in DOTTED.findall(text) if not resolves(name)})
    assert broken == []


def test_every_py_path_exists() -> None:
    broken = sorted(
        {
            (where, path)
            for where, text in TEXTS
            for path in py_paths(text)
            if not third_party(path) and not path_exists(path)
        }
    )
    assert broken == []


def test_every_class_example_takes_its_arguments() -> None:
    known = classes()
    broken = sorted({(where, problem) for where, text in TEXTS for problem in call_problems(text, known)})
    assert broken == []


def test_the_checks_catch_what_is_gone(tmp_path: Path) -> None:
    assert resolves("ultraserver.config.settings.Settings.gpu_node_groups")
    assert not resolves("ultraserver.capacity_block")
    assert not resolves("ultraserver.config.settings.Settings.no_such_field")
    assert DOTTED.findall("label ultraserver.io/ultraserver, see ultraserver.resources.platform.") == [
        "ultraserver.resources.platform"
    ]
    (tmp_path / "components" / "ultraserver" / "resources").mkdir(parents=True)
    managed = tmp_path / "components" / "ultraserver" / "resources" / "managed.py"
    managed.write_text("")
    files = [managed]
    assert path_exists("resources/managed.py", files, tmp_path) and path_exists("managed.py", files, tmp_path)
    assert not path_exists("components/managed.py", files, tmp_path)
    assert not path_exists("gpu_template.py", files, tmp_path)
    cited = "(config/vars.py:33-34), `mpi.py` at tag v1, pulumi_aws/provider.py, see scripts/regen_docs.py"
    assert PY_PATH.findall(cited) == ["pulumi_aws/provider.py", "scripts/regen_docs.py"]
    assert py_paths("cross-checked against cloudtools/awacs `awacs/ec2.py` and x/y.py") == ["x/y.py"]
    assert third_party("pulumi_aws/config/vars.py") and not third_party("scripts/regen_docs.py")


@pytest.mark.parametrize(
    ("example", "problem"),
    [
        ("ReservationWindow(start, end, scale_down_lead_minutes=60)", f"defaults to {DEFAULT_SCALE_DOWN_LEAD_MINUTES}"),
        ("GpuNodeGroupSettings(name='a', mode2='managed')", "takes no mode2"),
        ("GpuNodeGroupSettings(name='a', mode='managed')", ""),
    ],
)
def test_the_example_check_reads_arguments_and_defaults(example: str, problem: str) -> None:
    found = call_problems(example, classes())
    assert (problem in found[0]) if problem else found == []
