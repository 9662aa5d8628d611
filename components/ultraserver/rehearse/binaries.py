"""The real control plane's programs, built from their Go modules into a cache outside the repository.

Each program (facts/pins/control_plane.py) is built once with the local Go toolchain and the Go module proxy into
``$XDG_CACHE_HOME/ultraserver/bin`` (else ``~/.cache/ultraserver/bin``), under its name and version, and reused
afterwards. The build module for ``k8s.io/kubernetes`` is the usual one for using it as a dependency: its go.mod
requires the release and replaces each ``k8s.io/*`` staging module (the ``=> ./staging/...`` lines of the
release's own go.mod) with the matching ``v0.x.y``. Go's build cache (``go env GOCACHE``) is used when present, so
a second build of the same version compiles nothing. Builds run one at a time (a lock file in the cache), at a
lower priority (``nice``), and print their progress and time on stderr.

``python -m ultraserver.rehearse.binaries [--minor 1.35]`` builds what is missing and prints each path: the control
plane (etcd, kube-apiserver) and what schedules and admits beside it (kube-scheduler, kube-controller-manager,
kwok, the Kueue controller).
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO

from ultraserver.facts.kubernetes.eks_versions import DEFAULT_TEXT
from ultraserver.facts.pins.control_plane import (
    ETCD,
    KWOK,
    GoProgram,
    kube_apiserver,
    kube_controller_manager,
    kube_scheduler,
    kubernetes_release,
    kueue_controller,
)
from ultraserver.facts.pins.deploy_engine import DEPLOY_PROGRAMS, KUBERNETES_PROVIDER, PULUMI_CLI
from ultraserver.problems import ConfigError, Described, Problem

BUILD_COMMAND = "python -m ultraserver.rehearse.binaries"
"""The one command that builds the control plane (tests that need it name it when they skip)."""
NICE = ["nice", "-n", "10"]
"""Builds share the machine: a lower priority than interactive work."""
PROGRESS_EVERY = 100
"""Print a progress line every this many packages compiled."""


def cache_dir() -> Path:
    """Where built programs are kept, outside any repository."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "ultraserver" / "bin"


def cached(program: GoProgram) -> Path | None:
    """The built program when the cache holds it."""
    path = cache_dir() / program.key
    return path if path.is_file() and os.access(path, os.X_OK) else None


def programs(minor: str = DEFAULT_TEXT) -> tuple[list[GoProgram], str]:
    """The control plane for a Kubernetes minor, and a note when that minor is not served (the nearest runs)."""
    version, note = kubernetes_release(minor)
    return [ETCD, kube_apiserver(version)], note


# --- Scheduling and admission (issue 43 stage 2) -------------------------------------------------------------------


def scheduling_programs(minor: str = DEFAULT_TEXT) -> list[GoProgram]:
    """What runs beside the control plane for real scheduling and admission (rehearse/scheduling.py): the
    scheduler and the controller manager of the same Kubernetes release, kwok, and the pinned Kueue controller."""
    version, _ = kubernetes_release(minor)
    return [kube_scheduler(version), kube_controller_manager(version), KWOK, kueue_controller()]


# --- end of the scheduling block ------------------------------------------------------------------------------------


def missing(wanted: Sequence[GoProgram]) -> list[GoProgram]:
    """The programs the cache does not hold yet."""
    return [p for p in wanted if cached(p) is None]


def _go() -> str:
    found = shutil.which("go")
    if found is None:
        raise ConfigError(
            Problem(
                "go",
                Described("no `go` on the PATH"),
                "Go 1.25 or later and the Go module proxy",
                "install Go (the control plane is built from its Go modules)",
            )
        )
    return found


def _run(command: list[str], cwd: Path, env: dict[str, str], what: str) -> str:
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise ConfigError(
            Problem(what, Described(f"`{' '.join(command)}` failed: {done.stderr.strip()[-2000:]}"), "exit 0", "")
        )
    return done.stdout


def _staging_replaces(go: str, program: GoProgram, work: Path, env: dict[str, str]) -> list[str]:
    """The release's staging modules (``k8s.io/x => ./staging/src/k8s.io/x`` in its go.mod), each replaced with
    the matching v0.x.y; none for a module without staging."""
    if program.module != "k8s.io/kubernetes":
        return []
    info = json.loads(_run([go, "mod", "download", "-json", f"{program.module}@{program.version}"], work, env, "go"))
    staging_version = "v0." + program.version.split(".", 1)[1]
    found = []
    for line in Path(info["GoMod"]).read_text().splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] == "=>" and parts[2].startswith("./staging/"):
            found.append(f"\t{parts[0]} => {parts[0]} {staging_version}")
    return found


def ldflags(program: GoProgram) -> str:
    """Stripped, and for Kubernetes the version its /version answers (the release scripts set the same variables;
    without them it reports v0.0.0-master)."""
    flags = ["-s", "-w"]
    if program.module == "k8s.io/kubernetes":
        major, minor = program.version.lstrip("v").split(".")[:2]
        for package in ("k8s.io/component-base/version", "k8s.io/client-go/pkg/version"):
            flags += [
                f"-X {package}.gitVersion={program.version}",
                f"-X {package}.gitMajor={major}",
                f"-X {package}.gitMinor={minor}",
                f"-X {package}.gitTreeState=clean",
            ]
    flags += _deploy_ldflags(program)
    return " ".join(flags)


@contextmanager
def _locked() -> Iterator[None]:
    """One build at a time on this machine, across processes."""
    cache_dir().mkdir(parents=True, exist_ok=True)
    with (cache_dir() / ".build.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def build(program: GoProgram, out: TextIO = sys.stderr) -> Path:
    """Build one program into the cache (unless there already) and return its path; ConfigError when Go fails,
    with Go's own message."""
    # A built program is used without the lock, so that a rehearsal never waits behind another program's build.
    found = cached(program)
    if found is not None:
        return found
    with _locked():
        found = cached(program)
        if found is not None:
            return found
        go = _go()
        work = cache_dir().parent / "build" / program.key
        work.mkdir(parents=True, exist_ok=True)
        env = {**os.environ, "GOTOOLCHAIN": "local", "GOFLAGS": "-mod=mod -buildvcs=false"}
        started = time.monotonic()
        print(f"building {program.name} {program.version} from {program.module} into {cache_dir()}", file=out)
        replaces = _staging_replaces(go, program, work, env) + _deploy_replaces(go, program, work, env)
        lines = ["module ultraserver.local/build", "", "go 1.25", "", f"require {program.module} {program.version}"]
        lines += ["", "replace (", *replaces, ")"] if replaces else []
        (work / "go.mod").write_text("\n".join(lines) + "\n")
        _run([go, "get", f"{program.package}@{program.version}"], work, env, program.name)
        package = _deploy_main(go, program, work, env)
        total = len(_run([go, "list", "-deps", package], work, env, program.name).split())
        target = cache_dir() / f".{program.key}.part"
        command = [*NICE, go, "build", "-v", "-trimpath", "-ldflags", ldflags(program), "-o", str(target)]
        process = subprocess.Popen([*command, package], cwd=work, env=env, stderr=subprocess.PIPE, text=True, bufsize=1)
        assert process.stderr is not None
        compiled, tail = 0, list[str]()
        for line in process.stderr:
            compiled += 1
            tail = [*tail[-40:], line.rstrip()]
            if compiled % PROGRESS_EVERY == 0:
                print(f"  {program.name}: {compiled} of at most {total} packages compiled", file=out, flush=True)
        if process.wait() != 0:
            target.unlink(missing_ok=True)
            raise ConfigError(
                Problem(
                    program.name,
                    Described(f"go build of {program.package}@{program.version} failed: " + "\n".join(tail[-15:])),
                    "a build that succeeds",
                    "see Go's message",
                )
            )
        target.replace(cache_dir() / program.key)
        print(f"built {program.name} {program.version} in {time.monotonic() - started:.0f} s", file=out, flush=True)
        return cache_dir() / program.key


# --- The Pulumi engine for `rehearse --deploy` (issue 43 stage 3; facts/pins/deploy_engine.py) ---

_VERSION_VARIABLE = {
    PULUMI_CLI.name: "github.com/pulumi/pulumi/sdk/v3/go/common/version.Version",
    KUBERNETES_PROVIDER.name: "github.com/pulumi/pulumi-kubernetes/provider/v4/pkg/version.Version",
}
"""Where each program keeps the version it reports (its release build sets it; unset, the CLI says v0.0.0 and
the provider 'dev'). The provider reports its pseudo-version, so that the rehearsal can say which one ran."""


def _deploy_ldflags(program: GoProgram) -> list[str]:
    variable = _VERSION_VARIABLE.get(program.name)
    return [f"-X {variable}={program.version}"] if variable else []


def module_replaces(go_mod: str) -> list[str]:
    """A go.mod's replacements of one module by another, as replace-block lines; those onto a local directory (the
    repository's ``../sdk``) are left out: the required version stands in for them."""
    found = []
    for line in go_mod.splitlines():
        parts = line.split("//", 1)[0].removeprefix("replace").split()
        if "=>" in parts[:-1] and not parts[parts.index("=>") + 1].startswith("."):
            found.append("\t" + " ".join(parts))
    return found


def _deploy_replaces(go: str, program: GoProgram, work: Path, env: dict[str, str]) -> list[str]:
    """A Pulumi module's own replacements (pkg/v3 swaps atotto/clipboard for a fork): Go ignores a dependency's
    replace lines, so the build module repeats them."""
    if program not in DEPLOY_PROGRAMS:
        return []
    info = json.loads(_run([go, "mod", "download", "-json", f"{program.module}@{program.version}"], work, env, "go"))
    return module_replaces(Path(info["GoMod"]).read_text())


def _deploy_main(go: str, program: GoProgram, work: Path, env: dict[str, str]) -> str:
    """The package to build. The provider's ``main`` embeds ``schema-embed.json``, which its ``go generate`` writes
    from the module's schema.json (the file is not in the module): that package is copied into the build module,
    outside any repository, and generated there with the version it will report."""
    if program != KUBERNETES_PROVIDER:
        return program.package
    info = json.loads(_run([go, "list", "-e", "-json", program.package], work, env, program.name))
    local = work / "cmd" / program.name
    shutil.rmtree(local, ignore_errors=True)
    shutil.copytree(info["Dir"], local)
    for path in local.rglob("*"):
        path.chmod(0o755 if path.is_dir() else 0o644)
    _run([go, "run", "generate.go"], local, {**env, "VERSION": program.version.lstrip("v")}, program.name)
    return f"./cmd/{program.name}"


def deploy_programs(minor: str = DEFAULT_TEXT) -> tuple[list[GoProgram], str]:
    """The control plane, its controller manager and the Pulumi engine for ``--deploy``."""
    wanted, note = programs(minor)
    version, _ = kubernetes_release(minor)
    return [*wanted, kube_controller_manager(version), *DEPLOY_PROGRAMS], note


# --- end of the Pulumi engine block ---


def ensure(wanted: Sequence[GoProgram], out: TextIO = sys.stderr) -> dict[str, Path]:
    """Every program built (one at a time), by name."""
    return {program.name: build(program, out) for program in wanted}


def main(argv: Sequence[str] | None = None) -> int:
    """Build the control plane for a Kubernetes minor; print each program's path."""
    parser = argparse.ArgumentParser(prog=BUILD_COMMAND, description=__doc__.splitlines()[0])
    parser.add_argument("--minor", default=DEFAULT_TEXT, help=f"Kubernetes minor (default {DEFAULT_TEXT})")
    parser.add_argument("--deploy", action="store_true", help="also the Pulumi CLI and Kubernetes provider")
    parser.add_argument("--cached", action="store_true", help="build nothing: exit 1 naming what is not built yet")
    args = parser.parse_args(argv)
    wanted, note = deploy_programs(args.minor) if args.deploy else programs(args.minor)
    wanted += [p for p in scheduling_programs(args.minor) if p not in wanted]
    if args.cached:
        absent = missing(wanted)
        for program in absent:
            print(f"not built: {program.key}", file=sys.stderr)
        return 1 if absent else 0
    if note:
        print(note, file=sys.stderr)
    started = time.monotonic()
    try:
        paths = ensure(wanted)
    except ConfigError as err:
        print(f"{BUILD_COMMAND}: {err.items[0]}", file=sys.stderr)
        return 1
    for name, path in paths.items():
        print(f"{name}\t{path}")
    print(f"control plane ready in {time.monotonic() - started:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
