"""Regenerate the generated parts of the docs and the stack-file schema (run from the repo root).

docs/policies.md: the rules table, from ultraserver.policy. docs/components.md: tables from the components' dataclasses.
docs/permissions.md: one IAM policy per live command, from ultraserver.facts.aws.permissions.
docs/settings.md: the settings reference (``<!-- settings:... -->``), from the settings model, which also gives
stacks/stack.schema.json. docs/architecture.md: the shipped gb200-x72 stack's dependency graph (its Mermaid block).

The document's prose is written by hand; each table sits between markers naming what it is generated from:
``<!-- args:ultraserver.resources.network.NetworkArgs -->`` (fields, types, defaults, field docstrings),
``<!-- attrs:ultraserver.resources.network.Network -->`` (annotated attributes) and
``<!-- fn:ultraserver.config.subnets.plan_subnets -->`` (signature and docstring) and
``<!-- permissions:ultraserver.facts.aws.permissions.COMMAND_ACTIONS -->`` (a policy per command) and
``<!-- exits:ultraserver.cli.exits.EXIT_TABLE -->`` (docs/plan.md: every command's exit codes), each closed by
``<!-- end -->``.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import importlib
import inspect
import json
import re
import sys
import textwrap
from pathlib import Path
from typing import Any

from ultraserver.config.schema import model_rows, schema_text, settings_table
from ultraserver.policy.docs import render as render_rules

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = ROOT / "stacks" / "shipped-stacks.txt"
"""The stacks this repository ships; a user's own stack file in stacks/ is not in the docs' table."""
DOC = ROOT / "docs" / "components.md"
POLICY_DOC = DOC.with_name("policies.md")
PERMISSIONS_DOC = DOC.with_name("permissions.md")
SETTINGS_DOC = DOC.with_name("settings.md")
PLAN_DOC = DOC.with_name("plan.md")
ARCHITECTURE_DOC = DOC.with_name("architecture.md")
SCHEMA = ROOT / "stacks" / "stack.schema.json"
END = "<!-- end -->"
_BLOCK = re.compile(
    r"(<!-- (args|attrs|fn|settings|permissions|layers|exits|stacks):([\w.]+) -->\n)(.*?)(" + re.escape(END) + ")",
    re.S,
)


def _target(path: str) -> Any:
    """The object a dotted path names: module, then attribute (Class.method allowed)."""
    module_name, _, rest = path.rpartition(".")
    try:
        return getattr(importlib.import_module(module_name), rest)
    except (ModuleNotFoundError, ValueError):
        owner_module, _, owner = module_name.rpartition(".")
        return getattr(getattr(importlib.import_module(owner_module), owner), rest)


def _cell(text: str) -> str:
    """Text safe inside a Markdown table cell."""
    return text.replace("|", "\\|").replace("\n", " ")


def field_docs(cls: type) -> dict[str, str]:
    """Docstrings written under each annotated field of a class body."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
    body = tree.body[0].body if isinstance(tree.body[0], ast.ClassDef) else []
    docs: dict[str, str] = {}
    for node, following in zip(body, body[1:], strict=False):
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            if (
                isinstance(following, ast.Expr)
                and isinstance(following.value, ast.Constant)
                and isinstance(following.value.value, str)
            ):
                docs[node.target.id] = " ".join(following.value.value.split())
    return docs


def default_text(field: dataclasses.Field[Any]) -> str:
    """A field's default as Python, or 'required'."""
    if field.default is not dataclasses.MISSING:
        return f"`{field.default!r}`"
    factory = field.default_factory
    if factory is dataclasses.MISSING:
        return "required"
    if dataclasses.is_dataclass(factory) or hasattr(factory, "model_fields"):
        return f"`{factory.__name__}()`"
    return f"`{factory()!r}`"


def args_table(cls: type) -> str:
    """Markdown table of a dataclass (or a settings model): field, type, default, description."""
    if hasattr(cls, "model_fields"):
        return model_table(cls)
    docs = field_docs(cls)
    lines = ["| Field | Type | Default | Description |", "|---|---|---|---|"]
    for field in dataclasses.fields(cls):
        if not field.init:  # derived in __post_init__, not an argument
            continue
        lines.append(
            f"| `{field.name}` | `{_cell(str(field.type))}` | {_cell(default_text(field))} | "
            f"{_cell(docs.get(field.name, ''))} |"
        )
    return "\n".join(lines)


def model_table(cls: Any) -> str:
    """Markdown table of a pydantic settings model: stack key, type, default, description."""
    lines = ["| Key | Type | Default | Description |", "|---|---|---|---|"]
    for key, kind, default, description in model_rows(cls):
        lines.append(f"| `{key}` | {kind} | {default} | {_cell(description)} |")
    return "\n".join(lines)


def settings_reference(_: Any) -> str:
    """The settings table of docs/settings.md, generated from the settings model."""
    return settings_table()


def exits_table(table: tuple[tuple[int, str], ...]) -> str:
    """The exit codes of every command (ultraserver.cli.exits.EXIT_TABLE; each command's --help shows its rows)."""
    return "\n".join(["| Code | Meaning |", "|---|---|", *(f"| {code} | {_cell(text)} |" for code, text in table)])


def layers_table(layers: dict[str, tuple[str, ...]]) -> str:
    """The package's layer table, bottom up: each layer and what it may import."""
    lines = ["| Layer | May import |", "|---|---|"]
    lines += [
        f"| `{layer}` | {', '.join(f'`{a}`' for a in allowed) or 'nothing of ours'} |"
        for layer, allowed in layers.items()
    ]
    return "\n".join(lines)


def attrs_table(cls: type) -> str:
    """Markdown table of a component's annotated attributes: name and type."""
    lines = ["| Attribute | Type |", "|---|---|"]
    for name, annotation in inspect.get_annotations(cls).items():
        lines.append(f"| `{name}` | `{_cell(str(annotation))}` |")
    return "\n".join(lines)


def signature_text(function: Any) -> str:
    """`name(params) -> return` with annotations as written in the source (they are strings here)."""
    signature = inspect.signature(function)
    params = []
    for param in signature.parameters.values():
        text = param.name if param.kind is not param.VAR_KEYWORD else f"**{param.name}"
        if param.annotation is not param.empty:
            text += f": {param.annotation}"
        if param.default is not param.empty:
            text += f" = {param.default!r}"
        params.append(text)
    if any(p.kind is p.KEYWORD_ONLY for p in signature.parameters.values()):
        first = next(i for i, p in enumerate(signature.parameters.values()) if p.kind is p.KEYWORD_ONLY)
        params.insert(first, "*")
    returns = f" -> {signature.return_annotation}" if signature.return_annotation is not signature.empty else ""
    return f"{function.__name__}({', '.join(params)}){returns}"


def function_block(function: Any) -> str:
    """A function's signature as code and the first line of its docstring."""
    summary = (inspect.getdoc(function) or "").splitlines()[0]
    return f"```python\n{signature_text(function)}\n```\n\n{summary}"


def permissions_block(commands: dict[str, tuple[str, ...]]) -> str:
    """Per command: the IAM policy JSON that allows exactly the AWS actions it calls (none for plan)."""
    from ultraserver.facts.aws.permissions import policy_document

    parts = []
    for command, actions in commands.items():
        parts.append(f"### `ultraserver {command}`\n")
        if not actions:
            parts.append("No AWS call: no IAM permission needed.\n")
            continue
        parts.append(f"```json\n{json.dumps(policy_document(command), indent=2)}\n```\n")
    return "\n".join(parts).rstrip("\n")


def stacks_table(parse: Any) -> str:
    """One row per shipped stack (stacks/shipped-stacks.txt): its opening comment, VPC, device mode and node groups."""
    from ultraserver.config.files import load_yaml

    rows = ["| Stack | What | VPC | Devices | Node groups |", "|---|---|---|---|---|"]
    for name in shipped_stacks():
        path = ROOT / "stacks" / f"Pulumi.{name}.yaml"
        settings = parse(load_yaml(path)["config"], stack=name)
        groups = settings.gpu_node_groups
        managed = sum(g.node_groups for g in groups if g.mode == "managed")
        self_managed = sum(g.node_groups for g in groups if g.mode != "managed")
        counts = ", ".join(
            f"{count} {kind}" for count, kind in ((managed, "managed"), (self_managed, "self-managed")) if count
        )
        vpc = "existing" if settings.network.existing else "new"
        cells = [f"`{name}`", _opening_comment(path), vpc, settings.kubernetes.devices, counts]
        rows.append("| " + " | ".join(_cell(str(c)) for c in cells) + " |")
    return "\n".join(rows)


def shipped_stacks() -> list[str]:
    """The names in stacks/shipped-stacks.txt (one a line; '#' starts a comment line)."""
    lines = SHIPPED.read_text(encoding="utf-8").splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


def _opening_comment(path: Path) -> str:
    """The first paragraph of a stack file's comments (after the schema line)."""
    lines = []
    for line in path.read_text().splitlines():
        if line.startswith("# yaml-language-server"):
            continue
        if not line.startswith("# "):
            break
        lines.append(line[2:].strip())
    return " ".join(lines)


RENDERERS = {
    "args": args_table,
    "attrs": attrs_table,
    "fn": function_block,
    "settings": settings_reference,
    "permissions": permissions_block,
    "layers": layers_table,
    "exits": exits_table,
    "stacks": stacks_table,
}


def render(document: str) -> str:
    """The document with every marked block regenerated; ValueError when it has no markers."""
    if not _BLOCK.search(document):
        raise ValueError(f"docs: no '<!-- args|attrs|fn:<dotted path> -->' ... '{END}' markers found")
    return _BLOCK.sub(lambda m: f"{m.group(1)}{RENDERERS[m.group(2)](_target(m.group(3)))}\n{m.group(5)}", document)


def schema_of(_: str) -> str:
    """The JSON Schema of stack files (stacks/stack.schema.json)."""
    return schema_text()


def with_architecture_graph(document: str) -> str:
    """A document with its first Mermaid block replaced by the shipped gb200-x72 stack's dependency graph."""
    from ultraserver.offline import run_plan
    from ultraserver.offline.graph import mermaid

    head, rest = document.split("```mermaid\n", 1)
    return f"{head}```mermaid\n{mermaid(run_plan(ROOT, 'gb200-x72'))}```{rest.split('```', 1)[1]}"


def main(argv: list[str] | None = None) -> int:
    """Rewrite the generated parts of the docs; with --check, exit 1 when any is stale instead."""
    # argparse, so that --help (or a typo) prints the usage instead of rewriting the docs.
    parser = argparse.ArgumentParser(description="Regenerate the generated parts of the docs and the stack schema.")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 when any generated part is stale")
    check = parser.parse_args(argv).check
    stale = False
    docs = (
        (DOC, render),
        (POLICY_DOC, render_rules),
        (SETTINGS_DOC, render),
        (ARCHITECTURE_DOC, lambda text: with_architecture_graph(render(text))),
        (SCHEMA, schema_of),
        (PERMISSIONS_DOC, render),
        (PLAN_DOC, render),
    )
    for doc, fresh_of in docs:
        current = doc.read_text() if doc.exists() else ""
        fresh = fresh_of(current)
        if not check:
            doc.write_text(fresh)
        elif fresh != current:
            print(f"{doc} is stale: run PYTHONPATH=components python scripts/regen_docs.py")
            stale = True
    if check and not stale:
        print("Generated docs and schema are up to date.")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
