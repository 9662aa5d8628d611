"""The pulumi-policy adapters, driven through pulumi-policy's own analyzer servicer (no gRPC server started)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pytest
from google.protobuf import struct_pb2
from helpers.policy_cases import FAILING, Stack, base, config_for  # noqa: F401 (base is a fixture)
from helpers.policy_fixtures import DELETE, find, good_stack, patch
from pulumi.runtime.proto import analyzer_pb2
from pulumi_policy import EnforcementLevel, ResourceValidationPolicy, StackValidationPolicy
from pulumi_policy.policy import _PolicyAnalyzerServicer
from pulumi_policy.proxy import UNKNOWN_STRING_VALUE
from ultraserver.policy import RULES, PlanResource, evaluate
from ultraserver.policy.pack import PACK_NAME, to_pulumi_policies

LEVELS = {analyzer_pb2.ADVISORY: "advisory", analyzer_pb2.MANDATORY: "mandatory"}


def servicer(config: Mapping[str, Any] | None = None) -> _PolicyAnalyzerServicer:
    """The analyzer PolicyPack would serve, configured as `pulumi preview --policy-pack-config` would."""
    service = _PolicyAnalyzerServicer(PACK_NAME, "0.0.1", to_pulumi_policies(), EnforcementLevel.MANDATORY)
    request = analyzer_pb2.ConfigureAnalyzerRequest()
    for name, entry in (config or {}).items():
        # The engine fills a missing level with the policy's own default (GetAnalyzerInfo), not "mandatory".
        default = next((r.level for r in RULES if r.name == name), "mandatory")
        level = entry.get("enforcementLevel", default) if isinstance(entry, dict) else entry
        props = struct_pb2.Struct()
        props.update({k: v for k, v in entry.items() if k != "enforcementLevel"} if isinstance(entry, dict) else {})
        request.policyConfig[name].CopyFrom(
            analyzer_pb2.PolicyConfig(enforcementLevel=getattr(analyzer_pb2, level.upper()), properties=props)
        )
    service.Configure(request, None)
    return service


def struct(inputs: Mapping[str, Any]) -> struct_pb2.Struct:
    """Inputs as the engine sends them."""
    out = struct_pb2.Struct()
    out.update(dict(inputs))
    return out


def analyze(service: _PolicyAnalyzerServicer, resource: PlanResource) -> list[analyzer_pb2.AnalyzeDiagnostic]:
    """Run every resource policy on one resource."""
    request = analyzer_pb2.AnalyzeRequest(
        type=resource.type, properties=struct(resource.inputs), urn=resource.urn, name=resource.name
    )
    return list(service.Analyze(request, None).diagnostics)


def analyze_stack(
    service: _PolicyAnalyzerServicer, resources: Sequence[PlanResource]
) -> list[analyzer_pb2.AnalyzeDiagnostic]:
    """Run every stack policy on the whole stack."""
    request = analyzer_pb2.AnalyzeStackRequest(
        resources=[
            analyzer_pb2.AnalyzerResource(
                type=r.type,
                properties=struct(r.inputs),
                urn=r.urn,
                name=r.name,
                parent=r.parent or "",
                dependencies=list(r.dependencies),
                propertyDependencies={
                    k: analyzer_pb2.AnalyzerPropertyDependencies(urns=list(v))
                    for k, v in r.property_dependencies.items()
                },
            )
            for r in resources
        ]
    )
    return list(service.AnalyzeStack(request, None).diagnostics)


def run_pack(resources: Sequence[PlanResource], config: Mapping[str, Any] | None = None) -> set[tuple[str, str, str]]:
    """(policy, level, urn) of every diagnostic the pack reports for a stack."""
    service = servicer(config)
    diagnostics = analyze_stack(service, resources)
    for resource in resources:
        diagnostics += analyze(service, resource)
    return {(d.policyName, LEVELS[d.enforcementLevel], d.urn) for d in diagnostics}


def test_one_policy_per_rule_with_kind_and_level() -> None:
    """Resource rules become ResourceValidationPolicy, stack rules StackValidationPolicy, levels kept."""
    policies = to_pulumi_policies()
    assert [p.name for p in policies] == [r.name for r in RULES]
    for policy, rule in zip(policies, RULES, strict=False):
        kind = ResourceValidationPolicy if rule.check_resource else StackValidationPolicy
        assert isinstance(policy, kind)
        assert policy.enforcement_level == EnforcementLevel(rule.level)
        assert policy.description == rule.description


def test_config_schema_carries_defaults() -> None:
    """Options and their defaults reach the pack's schema, so `pulumi policy validate-config` knows them."""
    policy = next(p for p in to_pulumi_policies() if p.name == "eks-managed-node-group-quota")
    assert policy.config_schema is not None
    assert policy.config_schema.properties["quota"] == {
        "type": "integer",
        "description": "Managed node groups allowed per cluster.",
        "default": 30,
    }


def test_compliant_stack_passes_the_pack(base: Stack) -> None:
    """The reference stack raises no diagnostics through the pulumi-policy runtime."""
    assert run_pack(base.resources) == set()


@pytest.mark.parametrize(("case", "config"), FAILING, ids=[str(c) for c, _ in FAILING])
def test_pack_reports_what_evaluate_reports(case: Any, config: Any, base: Stack) -> None:
    """The pack and the offline plan's evaluate() agree on every broken stack."""
    stack = case.stack(base)
    settings = config_for(config, stack)
    expected = {(v.policy, v.level, v.urn) for v in evaluate(stack.resources, settings)}
    assert expected
    assert run_pack(stack.resources, settings) == expected


def test_resource_violation_message_says_how_to_fix() -> None:
    """A bad launch template reaches the engine as a mandatory diagnostic with the fix in its message."""
    stack = patch(good_stack(), "LaunchTemplate", "gpu", {"metadataOptions.httpTokens": "optional"})
    template = find(stack, "LaunchTemplate", "gpu")
    [diagnostic] = analyze(servicer(), template)
    assert diagnostic.policyName == "launch-template-imdsv2"
    assert diagnostic.enforcementLevel == analyzer_pb2.MANDATORY
    assert diagnostic.urn == template.urn
    assert 'http_tokens="required"' in diagnostic.message


def test_pack_config_overrides_enforcement_level() -> None:
    """enforcementLevel in the pack's config turns a mandatory rule advisory, or off."""
    stack = patch(good_stack(), "LaunchTemplate", "gpu", {"metadataOptions.httpTokens": "optional"})
    template = find(stack, "LaunchTemplate", "gpu")
    [advisory] = analyze(servicer({"launch-template-imdsv2": "advisory"}), template)
    assert advisory.enforcementLevel == analyzer_pb2.ADVISORY
    assert analyze(servicer({"launch-template-imdsv2": "disabled"}), template) == []


def test_pack_config_options_reach_the_rule() -> None:
    """A rule option in the pack's config changes the verdict."""
    eks = find(good_stack(), "Cluster", "gb200")
    assert analyze(servicer(), eks) == []
    [diagnostic] = analyze(
        servicer({"eks-kubernetes-version": {"enforcementLevel": "mandatory", "minVersion": "1.34"}}), eks
    )
    assert diagnostic.policyName == "eks-kubernetes-version"
    assert ">= 1.34" in diagnostic.message


def test_values_unknown_during_preview_are_not_violations() -> None:
    """Computed values (unknown in a real preview) are skipped, not flagged or turned into errors."""
    stack = patch(good_stack(), "Cluster", "gb200", {"encryptionConfigKeyArn": UNKNOWN_STRING_VALUE})
    stack = patch(
        stack, "LaunchTemplate", "gpu", {"metadataOptions.httpTokens": UNKNOWN_STRING_VALUE, "userData": DELETE}
    )
    assert run_pack(stack) == set()


def test_analyzer_info_lists_every_policy_with_its_schema() -> None:
    """What the CLI reads from the pack (GetAnalyzerInfo) names each rule, its level and option defaults."""
    info = servicer().GetAnalyzerInfo(None, None)
    assert info.name == PACK_NAME
    by_name = {p.name: p for p in info.policies}
    assert set(by_name) == {r.name for r in RULES}
    assert all(by_name[r.name].enforcementLevel == analyzer_pb2.MANDATORY for r in RULES if r.level == "mandatory")
    taints = by_name["efa-device-plugin-tolerates-gpu"].configSchema.properties["taintKeys"]
    assert list(taints["default"]) == ["nvidia.com/gpu"]
