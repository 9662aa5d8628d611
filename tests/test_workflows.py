"""GitHub workflows: schema-valid, stacks discovered from the stack files, previews and deploys wired to them."""

from __future__ import annotations

import json
import pathlib
import re
import subprocess
import sys
from typing import Any

import pytest
import yaml
from helpers.stacks import STACKS
from ultraserver.cli import build_parser
from ultraserver.cli.options import stack_settings
from ultraserver.config.settings import settings_warnings

ROOT = pathlib.Path(__file__).resolve().parents[1]
WORKFLOWS = ROOT / ".github" / "workflows"
PROJECT_FILE = "name: ultraserver-eks\nruntime: python\nstackConfigDir: stacks\n"


def workflow_files() -> list[pathlib.Path]:
    """Every workflow file, whichever YAML suffix it uses."""
    return sorted([*WORKFLOWS.glob("*.yml"), *WORKFLOWS.glob("*.yaml")])


def load(name: str) -> dict[str, Any]:
    """One workflow as data (PyYAML reads the `on` key as True; the tests only look at jobs and env)."""
    data: dict[str, Any] = yaml.safe_load((WORKFLOWS / name).read_text(encoding="utf-8"))
    return data


def check_schema(paths: list[pathlib.Path]) -> subprocess.CompletedProcess[str]:
    """Run check-jsonschema with its vendored GitHub workflow schema (no network)."""
    command = [sys.executable, "-m", "check_jsonschema", "--builtin-schema", "vendor.github-workflows"]
    return subprocess.run([*command, *map(str, paths)], capture_output=True, text=True, check=False)


def discover(workdir: pathlib.Path, tmp_path: pathlib.Path) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    """Run the stack-discovery step exactly as stacks.yml ships it (its shell command, `python` being this
    interpreter and this checkout's package), in workdir; return the run and its outputs."""
    steps = load("stacks.yml")["jobs"]["discover"]["steps"]
    step = next(s for s in steps if s.get("id") == "discover")
    assert "shell" not in step and "yaml" not in step["run"].lower(), "the workflow parses no stack file itself"
    output = tmp_path / "github_output"
    output.write_text("", encoding="utf-8")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    python = bin_dir / "python"
    python.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n', encoding="utf-8")
    python.chmod(0o755)
    env = {"GITHUB_OUTPUT": str(output), "PATH": f"{bin_dir}:/usr/bin:/bin", "PYTHONPATH": str(ROOT / "components")}
    run = subprocess.run(["bash", "-c", step["run"]], cwd=workdir, env=env, capture_output=True, text=True)
    pairs = (line.split("=", 1) for line in output.read_text(encoding="utf-8").splitlines())
    return run, {key: json.loads(value) for key, value in pairs}


def stack(*lines: str, cluster: str = "", kubernetes: str = "", network: str = "") -> str:
    """A valid stack file (public endpoint limited to CIDRs, a new VPC) with extra config lines and section keys."""
    return (
        "config:\n  aws:region: us-east-1\n"
        + "".join(f"  {line}\n" for line in lines)
        + f"  ultraserver-eks:cluster:\n    name: c1\n{cluster or '    endpointPublicAccessCidrs: [198.18.0.0/24]'}\n"
        + f"  ultraserver-eks:network:\n    availabilityZones: [us-east-1a, us-east-1b]\n{network}"
        + (f"  ultraserver-eks:kubernetes:\n{kubernetes}\n" if kubernetes else "")
    )


def write_project(root: pathlib.Path, stacks: dict[str, str]) -> None:
    """A throwaway Pulumi project with the given stack files (name -> file text)."""
    (root / "Pulumi.yaml").write_text(PROJECT_FILE, encoding="utf-8")
    (root / "stacks").mkdir()
    for name, text in stacks.items():
        (root / "stacks" / f"Pulumi.{name}.yaml").write_text(text, encoding="utf-8")


def test_every_workflow_passes_the_github_workflow_schema() -> None:
    files = workflow_files()
    assert {f.name for f in files} >= {"pull-request.yml", "deploy.yml", "stacks.yml", "checks.yml"}
    result = check_schema(files)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize(
    ("broken", "fixed"),
    [
        ("    runs-on: ubuntu-latest\n", ""),  # a job that neither runs somewhere nor calls a workflow
        ("  pull_request:\n", "  pull_requests:\n"),  # a trigger that does not exist
        ("      cancel-in-progress: true\n", "      cancel-in-progress: sometimes\n"),
    ],
)
def test_schema_check_rejects_a_broken_workflow(tmp_path: pathlib.Path, broken: str, fixed: str) -> None:
    text = (WORKFLOWS / "pull-request.yml").read_text(encoding="utf-8")
    assert broken in text
    intact, damaged = tmp_path / "intact.yml", tmp_path / "damaged.yml"
    intact.write_text(text, encoding="utf-8")
    damaged.write_text(text.replace(broken, fixed), encoding="utf-8")
    assert check_schema([intact]).returncode == 0
    result = check_schema([damaged])
    assert result.returncode == 1
    assert "damaged.yml" in result.stdout + result.stderr


def test_discovery_previews_every_stack_and_deploys_only_opted_in_ones(tmp_path: pathlib.Path) -> None:
    work = tmp_path / "repo"
    work.mkdir()
    write_project(
        work,
        {
            "gb200-x72": stack("ultraserver-eks:autoDeploy: true"),
            "gb200-x36": stack("ultraserver-eks:autoDeploy: false"),
            "gb200-multi": stack(),
        },
    )
    (work / "stacks" / "README.md").write_text("not a stack\n", encoding="utf-8")
    run, outputs = discover(work, tmp_path)
    assert run.returncode == 0, run.stderr
    assert outputs == {
        "preview": ["gb200-multi", "gb200-x36", "gb200-x72"],
        "separate": [],
        "deploy": ["gb200-x72"],
        "platform": [{"stack": "gb200-x72", "runs-on": ["ubuntu-latest"]}],
        "kubernetes": [],
    }


@pytest.mark.parametrize(
    "flag",
    [
        "ultraserver-eks:autoDeploy: true",
        "ultraserver-eks:autoDeploy: 'true'",
        "autoDeploy: true",
        'autoDeploy: "true"',
    ],
)
def test_autodeploy_means_what_it_means_to_pulumi_whether_bare_or_quoted(tmp_path: pathlib.Path, flag: str) -> None:
    """The engine hands programs every config value as text, and puts bare keys in the project's namespace: these
    four are one setting to `pulumi up`, so to CI too."""
    work = tmp_path / "repo"
    work.mkdir()
    write_project(work, {"a": stack(flag)})
    run, outputs = discover(work, tmp_path)
    assert run.returncode == 0, run.stderr
    assert outputs["deploy"] == ["a"]


def test_discovery_runs_each_deploy_where_the_stack_reaches_its_api_server(tmp_path: pathlib.Path) -> None:
    work = tmp_path / "repo"
    work.mkdir()
    in_vpc = (
        "    deployerAccess: in-vpc\n    deployerRunnerLabels: [self-hosted, vpc]\n"
        "    deployerSecurityGroupIds: [sg-0123456789abcdef0]"
    )
    existing = (
        "    vpcId: vpc-0123456789abcdef0\n    privateSubnetIds: [subnet-0123456789abcdef0, subnet-0123456789abcdef1]\n"
    )
    split = "    deployerRunnerLabels: [self-hosted, vpc]\n    deployerCidrs: [10.0.0.0/16]"
    on = "ultraserver-eks:autoDeploy: true"
    layer = "    layer: separate-stack"
    write_project(
        work,
        {
            "in-vpc": stack(on, cluster=in_vpc, network=existing),
            "split": stack(on, cluster=split, kubernetes=layer),
            "off": stack(cluster=split, kubernetes=layer),
        },
    )
    run, outputs = discover(work, tmp_path)
    assert run.returncode == 0, run.stderr
    assert outputs["platform"] == [
        {"stack": "in-vpc", "runs-on": ["self-hosted", "vpc"]},
        # The split platform program calls only AWS APIs, so a GitHub-hosted runner deploys it.
        {"stack": "split", "runs-on": ["ubuntu-latest"]},
    ]
    assert outputs["kubernetes"] == [{"stack": "split", "runs-on": ["self-hosted", "vpc"]}]
    assert outputs["separate"] == ["off", "split"]


def test_shipped_deploy_targets_follow_each_stacks_reachability(tmp_path: pathlib.Path) -> None:
    work = tmp_path / "repo"
    work.mkdir()
    stacks = {}
    for stack in STACKS:
        path = ROOT / "stacks" / f"Pulumi.{stack}.yaml"
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        data["config"]["ultraserver-eks:autoDeploy"] = True
        stacks[stack] = yaml.safe_dump(data)
    write_project(work, stacks)
    run, outputs = discover(work, tmp_path)
    assert run.returncode == 0, run.stderr
    platform = {t["stack"]: t["runs-on"] for t in outputs["platform"]}
    assert platform["gb200-x72"] == ["ubuntu-latest"]  # first deploy through a public endpoint limited to CIDRs
    assert platform["gb200-multi"] == ["ubuntu-latest"]  # separate-stack: the platform needs AWS APIs only
    assert outputs["kubernetes"] == [{"stack": "gb200-multi", "runs-on": ["self-hosted", "gb200-vpc"]}]


def test_deploy_jobs_run_on_the_discovered_runners_and_the_split_layer_after_the_platform() -> None:
    jobs = load("deploy.yml")["jobs"]
    assert jobs["up"]["runs-on"] == "${{ matrix.runs-on }}"
    assert jobs["up"]["strategy"]["matrix"]["include"] == "${{ fromJSON(needs.stacks.outputs.platform) }}"
    layer = jobs["up-kubernetes"]
    assert layer["runs-on"] == "${{ matrix.runs-on }}"
    assert set(layer["needs"]) == {"stacks", "up"}
    assert layer["strategy"]["matrix"]["include"] == "${{ fromJSON(needs.stacks.outputs.kubernetes) }}"
    pulumi = next(s for s in layer["steps"] if s.get("uses", "").startswith("pulumi/actions@"))
    assert pulumi["with"]["work-dir"] == "kubernetes-layer"
    assert pulumi["with"]["policyPacks"] == "../policies"
    assert (ROOT / pulumi["with"]["work-dir"] / "Pulumi.yaml").is_file()
    assert layer["environment"] == "production"


@pytest.mark.parametrize(
    ("stacks", "message"),
    [
        ({"a": stack("ultraserver-eks:autoDeploy: 1")}, "Pulumi.a.yaml: ultraserver-eks:autoDeploy"),
        ({"a": stack("ultraserver-eks:autoDeploy: 'yes'")}, "Pulumi.a.yaml: ultraserver-eks:autoDeploy"),
        ({"a$(id)": stack()}, "Pulumi.a$(id).yaml"),
        ({}, "no stack file stacks/Pulumi.<stack>.yaml"),
        (
            {"a": stack("ultraserver-eks:autoDeploy: true", cluster="    deployerRunnerLabels: 7")},
            "Pulumi.a.yaml: ultraserver-eks:cluster.deployerRunnerLabels",
        ),
    ],
)
def test_discovery_fails_loudly_on_bad_stack_files(
    tmp_path: pathlib.Path, stacks: dict[str, str], message: str
) -> None:
    work = tmp_path / "repo"
    work.mkdir()
    write_project(work, stacks)
    run, outputs = discover(work, tmp_path)
    assert run.returncode == 2
    assert message in run.stderr
    assert "Traceback" not in run.stderr
    assert outputs == {}


def test_the_plan_reads_autodeploy_as_ci_does(tmp_path: pathlib.Path) -> None:
    """A bare, quoted autoDeploy is on for the plan too: it warns that a GitHub-hosted runner is outside the
    endpoint's CIDRs (docs/deploy.md, Reachability)."""
    work = tmp_path / "repo"
    work.mkdir()
    write_project(work, {"a": stack('autoDeploy: "true"')})
    settings = stack_settings(work, "a")
    assert settings.auto_deploy is True
    assert any(p.key == "ultraserver-eks:cluster.deployerRunnerLabels" for p in settings_warnings(settings))


def test_every_stack_in_the_repo_is_in_the_preview_matrix(tmp_path: pathlib.Path) -> None:
    stack_files = sorted((ROOT / "stacks").glob("Pulumi.*.yaml"))
    assert stack_files, "stacks/ holds no Pulumi.<stack>.yaml; CI would preview nothing"
    run, outputs = discover(ROOT, tmp_path)
    assert run.returncode == 0, run.stderr
    assert outputs["preview"] == sorted(f.name[len("Pulumi.") : -len(".yaml")] for f in stack_files)
    assert set(outputs["deploy"]) <= set(outputs["preview"])


@pytest.mark.parametrize(
    ("name", "job", "stacks", "command"),
    [("pull-request.yml", "preview", "preview", "preview"), ("deploy.yml", "up", "platform", "up")],
)
def test_pulumi_jobs_run_per_discovered_stack_after_the_checks(name: str, job: str, stacks: str, command: str) -> None:
    jobs = load(name)["jobs"]
    assert jobs["stacks"]["uses"] == "./.github/workflows/stacks.yml"
    assert jobs["checks"]["uses"] == "./.github/workflows/checks.yml"
    assert jobs["checks"]["with"]["stacks"] == "${{ needs.stacks.outputs.preview }}"
    pulumi_job = jobs[job]
    assert set(pulumi_job["needs"]) == {"stacks", "checks"}
    matrix = pulumi_job["strategy"]["matrix"]
    assert matrix.get("stack", matrix.get("include")) == f"${{{{ fromJSON(needs.stacks.outputs.{stacks}) }}}}"
    assert "${{ matrix.stack }}" in pulumi_job["concurrency"]["group"]
    pulumi = next(s for s in pulumi_job["steps"] if s.get("uses", "").startswith("pulumi/actions@"))
    assert pulumi["with"]["command"] == command
    assert pulumi["with"]["policyPacks"] == "policies"
    assert "matrix.stack" in pulumi["with"]["stack-name"]


def test_previews_comment_on_the_pull_request_and_deploys_wait_for_reviewers() -> None:
    preview = load("pull-request.yml")["jobs"]["preview"]
    pulumi = next(s for s in preview["steps"] if s.get("uses", "").startswith("pulumi/actions@"))
    assert pulumi["with"]["comment-on-pr"] is True
    up = load("deploy.yml")["jobs"]["up"]
    assert up["environment"] == "production"
    assert up["concurrency"]["cancel-in-progress"] is False


def test_plan_runs_for_every_stack_without_splicing_the_name_into_shell() -> None:
    plan = load("checks.yml")["jobs"]["plan"]
    assert plan["strategy"]["matrix"]["stack"] == "${{ fromJSON(inputs.stacks) }}"
    step = next(s for s in plan["steps"] if "ultraserver plan" in s.get("run", ""))
    assert step["env"]["STACK"] == "${{ matrix.stack }}"
    assert 'ultraserver plan --stack "$STACK"' in step["run"]
    assert "${{" not in step["run"]


def test_every_stack_is_rehearsed_after_its_plan_without_splicing_the_name_into_shell() -> None:
    plan = load("checks.yml")["jobs"]["plan"]
    install = next(s for s in plan["steps"] if s.get("name") == "Install")
    assert "'.[rehearse]'" in install["run"]
    step = next(s for s in plan["steps"] if "ultraserver rehearse" in s.get("run", ""))
    assert step["env"]["STACK"] == "${{ matrix.stack }}"
    assert 'ultraserver rehearse --stack "$STACK"' in step["run"] and 'exit "$status"' in step["run"]
    assert "${{" not in step["run"]
    assert 'ultraserver rehearse --stack "$stack"' in (ROOT / ".ci" / "run").read_text()


def test_permissions_are_granted_per_job_and_only_where_needed() -> None:
    for path in workflow_files():
        data = load(path.name)
        assert data["permissions"] == {}, path.name
        for job_name, job in data["jobs"].items():
            granted = job["permissions"]
            steps = job.get("steps", [])
            assumes_role = any(s.get("uses", "").startswith("aws-actions/configure-aws-credentials@") for s in steps)
            comments = any(s.get("with", {}).get("comment-on-pr") is True for s in steps)
            assert granted.get("contents") == "read", (path.name, job_name)
            assert (granted.get("id-token") == "write") == assumes_role, (path.name, job_name)
            assert (granted.get("pull-requests") == "write") == comments, (path.name, job_name)
            assert set(granted) <= {"contents", "id-token", "pull-requests"}, (path.name, job_name)


def test_actions_are_pinned_to_a_release() -> None:
    for path in workflow_files():
        jobs = load(path.name)["jobs"].values()
        steps = [s for j in jobs for s in j.get("steps", [])]
        refs = [item["uses"] for item in [*jobs, *steps] if "uses" in item]
        for ref in refs:
            if not ref.startswith("./"):
                assert re.fullmatch(r"[\w.-]+/[\w./-]+@(v\d+(\.\d+)*|[0-9a-f]{40})", ref), (path.name, ref)


def test_pulumi_cli_matches_the_sdk_pin() -> None:
    constraints = ROOT / "constraints.txt"
    if not constraints.exists():
        pytest.skip("constraints.txt not in this checkout yet")
    pins = re.findall(r"^pulumi==(\S+)$", constraints.read_text(encoding="utf-8"), flags=re.MULTILINE)
    assert len(pins) == 1, "constraints.txt must pin pulumi exactly once"
    for name in ("pull-request.yml", "deploy.yml"):
        assert load(name)["env"]["PULUMI_CLI_VERSION"] == pins[0], name


def test_the_weekly_versions_check_in_docs_ci_is_a_valid_workflow_running_the_check(tmp_path: pathlib.Path) -> None:
    text = (ROOT / "docs" / "ci.md").read_text(encoding="utf-8")
    section = text.split("## Told when the versions drift (weekly)", 1)[1]
    block = re.search(r"```yaml\n(.*?)\n```", section, re.S)
    assert block is not None
    path = tmp_path / "versions-drift.yml"
    path.write_text(block.group(1), encoding="utf-8")
    result = check_schema([path])
    assert result.returncode == 0, result.stdout + result.stderr
    workflow = yaml.safe_load(block.group(1))
    assert workflow[True]["schedule"][0]["cron"].split()[4] == "1"  # weekly, on Mondays
    step = next(s for s in workflow["jobs"]["check"]["steps"] if "versions --check" in s.get("run", ""))
    assert step["shell"] == "bash"  # GitHub adds -o pipefail only then: tee must not hide exit 1
    command = step["run"].replace("\\\n", " ").split("|")[0].split()
    args = build_parser().parse_args(command[1:])
    assert args.check and args.kubernetes_version == "1.35" and args.json == "drift.json"
