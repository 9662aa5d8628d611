"""Gate: every class `ultraserver` exports checks what a program hands it. A wrong type or shape for any argument (a
string for a list, a bool for a whole number, a mapping with unknown keys) is a ConfigError naming the class and the
argument, never a silent coercion; components take one checked Args class. tests/cli/test_program_arguments.py shows
the same refusals end to end (exit 2 from `ultraserver plan`)."""

from __future__ import annotations

import dataclasses
import inspect
import types
import typing
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from typing import Any

import pulumi
import pulumi_kubernetes as k8s
import pytest
import ultraserver
from pydantic import BaseModel, ValidationError
from ultraserver.config.errors import program_problems
from ultraserver.problems import ConfigError

RESULTS = {
    "Problem": "a finding the toolkit reports",
    "ConfigError": "the error the toolkit raises",
    "Plan": "what run_plan returns",
    "PlanResource": "a resource of a Plan",
    "ComputeDomainPodPieces": "what compute_domain_pod_pieces returns",
}
"""Public classes a program receives from the toolkit rather than builds, and why they are exempt."""

GB200 = "p6e-gb200.36xlarge"
SETTINGS = ultraserver.Settings(
    region="us-east-1",
    cluster=ultraserver.ClusterSettings(name="gb200", public_access_cidrs=["203.0.113.0/24"]),
    network=ultraserver.NetworkSettings(availability_zones=["us-east-1a", "us-east-1b"]),
)
CORE = dict(
    name="gb200",
    endpoint="https://ABC.gr7.us-east-1.eks.amazonaws.com",
    certificate_authority="Y2VydA==",
    service_cidr="10.100.0.0/16",
    security_group_id="sg-0ccccccccccccccc1",
)
GROUP = dict(name="nvl72", availability_zone="us-east-1-dfw-2a", capacity_reservation_ids=["cr-0123456789abcdef0"])
SAMPLES: dict[str, dict[str, Any]] = {
    "CapacityBlock": dict(reservation_ids=("cr-0123456789abcdef0",), window=None),
    "ClusterArgs": dict(name="gb200", vpc_id="vpc-0a", private_subnet_ids=["subnet-0a", "subnet-0b"]),
    "ClusterCoreData": CORE,
    "ClusterSettings": dict(name="gb200"),
    "ComputeDomainArgs": dict(name="cd"),
    "DraDriverArgs": dict(system_node_selector={"role": "system"}),
    "EfaInterface": dict(network_card_index=1, device_index=0, interface_type="efa-only"),
    "GpuNodeGroupArgs": dict(
        settings=ultraserver.GpuNodeGroupSettings(**GROUP),  # type: ignore[arg-type]
        cluster=ultraserver.ClusterCoreData(**CORE),
        subnet_ids=["subnet-0a"],
    ),
    "GpuNodeGroupSettings": GROUP,
    "GpuOperatorArgs": dict(system_node_selector={"role": "system"}),
    # A Provider as a type only: constructing one registers a resource, which needs a Pulumi run.
    "KubernetesLayerArgs": dict(settings=SETTINGS, provider=object.__new__(k8s.Provider)),
    "NetworkArgs": dict(cluster_name="gb200"),
    "NodeDevices": dict(instance_type=GB200, gpus=4, efa_per_gpu=(1, 1, 1, 1)),
    "PlatformArgs": dict(settings=SETTINGS),
    "ReservationWindow": dict(
        start=datetime(2026, 12, 1, 11, 30, tzinfo=timezone.utc),
        end=datetime(2026, 12, 15, 11, 30, tzinfo=timezone.utc),
    ),
    "Settings": dict(region="us-east-1", cluster=ultraserver.ClusterSettings(name="gb200")),
}
"""Valid required arguments of each class that has any (the probe replaces one argument at a time)."""


def public_classes() -> dict[str, type]:
    return {n: o for n in ultraserver.__all__ if inspect.isclass(o := getattr(ultraserver, n))}


def argument_classes() -> list[str]:
    """The public classes a program hands arguments to (not components, not results)."""
    return sorted(
        n for n, c in public_classes().items() if n not in RESULTS and not issubclass(c, pulumi.ComponentResource)
    )


def hints(cls: type) -> dict[str, Any]:
    """The annotation of each argument a program may pass."""
    if issubclass(cls, BaseModel):
        return {name: f.annotation for name, f in cls.model_fields.items() if not str(f.alias or "").startswith("__")}
    localns = {"Output": pulumi.Output, "T": Any}
    resolved = typing.get_type_hints(cls, localns=localns)
    return {f.name: resolved[f.name] for f in dataclasses.fields(cls) if f.init}


def _kinds(hint: Any) -> set[str]:
    """What a hint accepts, coarsely: list, int, bool, str, float, mapping, model, time, other."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType, typing.Annotated):
        return set().union(*(_kinds(a) for a in args[: 1 if origin is typing.Annotated else None]))
    if origin is typing.Literal:
        return {"literal"}
    base = origin or hint
    if base in (list, tuple) or (inspect.isclass(base) and issubclass(base, Sequence) and base is not str):
        return {"list"}
    if inspect.isclass(base) and issubclass(base, Mapping) or base is dict:
        return {"mapping"}
    named = {bool: "bool", int: "int", str: "str", float: "float", datetime: "time"}
    if base in named:
        return {named[base]}
    if inspect.isclass(base) and (issubclass(base, BaseModel) or dataclasses.is_dataclass(base)):
        return {"model"}
    return {"other"}


def wrong_value(hint: Any) -> tuple[str, Any] | None:
    """A value of the wrong shape for the hint, and what it is; None when the hint takes anything."""
    kinds = _kinds(hint)
    probes = [
        ("list", "a string for a list", "subnet-0a"),
        ("int", "a bool for a whole number", True),
        ("float", "a string for a number", "1.5"),
        ("bool", "a string for true or false", "yes"),
        ("str", "a list for a string", ["a"]),
        ("literal", "a value outside the choices", "no-such-choice"),
        ("mapping", "a string for a mapping", "key=value"),
        ("model", "a mapping with unknown keys for a model", {"no_such_key": 1}),
        ("time", "a string for a time", "2026-12-01"),
    ]
    if "other" in kinds and len(kinds) == 1:
        return None
    for kind, what, value in probes:
        if kind in kinds:
            # A value that another accepted kind would take is no wrong value (e.g. a str where str | list is allowed).
            takes_it = {"list": {"str"}, "int": {"bool"}, "model": {"mapping"}, "mapping": {"str"}, "literal": {"str"}}
            if not kinds & takes_it.get(kind, set()) and not (kind == "str" and "list" in kinds):
                return what, value
    return None


def probes() -> list[tuple[str, str, str, Any]]:
    found = []
    for name in argument_classes():
        for argument, hint in hints(public_classes()[name]).items():
            wrong = wrong_value(hint)
            if wrong is not None:
                found.append((name, argument, *wrong))
    return found


def refused(cls: type, kwargs: dict[str, Any], key: str) -> None:
    """The class refuses the arguments with a Problem keyed by the argument. A settings model raises pydantic's
    ValidationError, which the plan turns into these Problems (exit 2) as it does here (config.errors)."""
    try:
        cls(**kwargs)
    except ConfigError as error:
        keys = [str(p.key) for p in error.items]
    except ValidationError as error:
        keys = [str(p.key) for p in program_problems(error)]
    else:
        pytest.fail(f"{key}: accepted {kwargs}")
    # The whole stack's model names its fields as the stack file does its sections (Settings:auto_deploy).
    named = (key, key.replace(".", ":", 1))
    assert any(k in named or k.startswith(tuple(f"{n}{c}" for n in named for c in ".[")) for k in keys), (key, keys)


@pytest.mark.parametrize(("name", "argument", "what", "value"), probes(), ids=lambda v: str(v)[:40])
def test_a_wrong_shape_for_any_argument_is_a_config_error_naming_it(
    name: str, argument: str, what: str, value: Any
) -> None:
    cls = public_classes()[name]
    refused(cls, {**SAMPLES.get(name, {}), argument: value}, f"{name}.{argument}")


@pytest.mark.parametrize("name", argument_classes())
def test_an_unknown_argument_is_a_config_error_naming_it(name: str) -> None:
    cls = public_classes()[name]
    refused(cls, {**SAMPLES.get(name, {}), "no_such_argument": 1}, f"{name}.no_such_argument")


@pytest.mark.parametrize("name", argument_classes())
def test_the_samples_are_valid_so_each_probe_tests_one_argument(name: str) -> None:
    public_classes()[name](**SAMPLES.get(name, {}))


def test_every_component_takes_one_checked_args_class() -> None:
    classes = public_classes()
    for name, cls in classes.items():
        if issubclass(cls, pulumi.ComponentResource):
            args = inspect.signature(cls.__init__).parameters["args"].annotation
            assert args == f"{name}Args" and f"{name}Args" in classes, name
            assert f"{name}Args" in argument_classes()


def test_the_gate_probes_every_argument_class_and_the_three_shapes() -> None:
    probed = {(name, what) for name, _, what, _ in probes()}
    assert {name for name, _ in probed} >= set(argument_classes()) - {"DeviceMode"} - {
        n for n in argument_classes() if not SAMPLES.get(n) and not hints(public_classes()[n])
    }
    shapes = {what for _, what in probed}
    assert {"a string for a list", "a bool for a whole number", "a mapping with unknown keys for a model"} <= shapes
