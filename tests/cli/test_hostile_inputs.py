"""Hostile or broken input files and options end at once with exit 2 and a clear message.

Each command runs in a subprocess with a generous timeout: before the bounded reader, the alias bomb ran at 100% CPU
until killed, so a hang fails the test (subprocess.TimeoutExpired) instead of hanging the suite.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from helpers.cli import copy_project, run_main, run_process
from helpers.stacks import ROOT
from ultraserver.cli import plan as cli_plan

ALIAS_BOMB = "\n".join(
    ['  ultraserver-eks:bomb0: &a0 ["x", "x", "x", "x", "x", "x", "x", "x", "x", "x"]']
    + [f"  ultraserver-eks:bomb{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 10)]
)


def stack_with(tmp_path: Path, extra: bytes) -> Path:
    """A project copy whose stack 'bad' is gb200-x72 with ``extra`` appended under config:."""
    project = copy_project(tmp_path / "project")
    shipped = (project / "stacks" / "Pulumi.gb200-x72.yaml").read_bytes()
    (project / "stacks" / "Pulumi.bad.yaml").write_bytes(shipped.rstrip(b"\n") + b"\n" + extra + b"\n")
    return project


@pytest.mark.parametrize("command", ["plan", "status"])
def test_alias_bomb_in_config_exits_2(tmp_path: Path, command: str) -> None:
    project = stack_with(tmp_path, ALIAS_BOMB.encode())
    result = run_process(command, "--stack", "bad", "--project-dir", str(project))
    assert result.returncode == 2, result.stderr
    assert "Pulumi.bad.yaml" in result.stderr
    assert "aliases that expand this value to more than 100,000 YAML nodes" in result.stderr


def test_non_utf8_stack_file_exits_2_with_the_byte_offset(tmp_path: Path) -> None:
    project = stack_with(tmp_path, b"  ultraserver-eks:note: caf\xe9")
    offset = (project / "stacks" / "Pulumi.bad.yaml").read_bytes().index(b"\xe9")
    result = run_process("plan", "--stack", "bad", "--project-dir", str(project))
    assert result.returncode == 2, result.stderr
    assert "Pulumi.bad.yaml\n" in result.stderr
    assert f"  text that is not UTF-8 at byte {offset} (0xe9)\n" in result.stderr
    assert "internal error" not in result.stderr


def test_non_utf8_deployed_file_exits_2_with_the_byte_offset(tmp_path: Path) -> None:
    deployed = tmp_path / "state.json"
    deployed.write_bytes(b'{"resources": ["\xff"]}')
    result = run_process("plan", "--stack", "gb200-x72", "--project-dir", str(ROOT), "--deployed", str(deployed))
    assert result.returncode == 2, result.stderr
    assert f"--deployed {str(deployed)!r}\n" in result.stderr
    assert "  text that is not UTF-8 at byte 16 (0xff)\n" in result.stderr


def test_yaml11_boolean_is_refused_not_read_as_true(tmp_path: Path) -> None:
    project = copy_project(tmp_path / "project")
    shipped = (project / "stacks" / "Pulumi.gb200-x72.yaml").read_text()
    assert "  ultraserver-eks:imexCheck:\n    enabled: true\n" in shipped
    (project / "stacks" / "Pulumi.bad.yaml").write_text(shipped.replace("    enabled: true\n", "    enabled: yes\n"))
    result = run_process("plan", "--stack", "bad", "--project-dir", str(project))
    assert result.returncode == 2, result.stderr
    assert "Pulumi.bad.yaml line 45  yes unquoted: the Pulumi CLI reads it as the text 'yes'" in result.stderr
    assert "write true or false" in result.stderr


def test_window_time_without_time_zone_exits_2(tmp_path: Path) -> None:
    project = copy_project(tmp_path / "project")
    shipped = (project / "stacks" / "Pulumi.gb200-x72.yaml").read_text()
    assert 'start: "2026-12-01T11:30:00Z"' in shipped
    naive = shipped.replace('start: "2026-12-01T11:30:00Z"', 'start: "2026-12-01T11:30:00"')
    (project / "stacks" / "Pulumi.bad.yaml").write_text(naive)
    result = run_process("plan", "--stack", "bad", "--project-dir", str(project))
    assert result.returncode == 2, result.stderr
    assert "  -  ultraserver-eks:gpuNodeGroups[0].reservationWindow.start\n       '2026-12-01T11:30:00'\n" in (
        result.stderr
    )
    assert "\n       allowed: a time with its time zone" in result.stderr


def test_nul_byte_in_a_stack_file_exits_2_naming_the_line(tmp_path: Path) -> None:
    project = stack_with(tmp_path, b"  ultraserver-eks:note: a\x00b")
    line = (project / "stacks" / "Pulumi.bad.yaml").read_bytes().count(b"\n")
    result = run_main("plan", "--stack", "bad", "--project-dir", str(project))
    assert result.code == 2, result.stderr
    assert f"Pulumi.bad.yaml line {line}  the character U+0000, which YAML does not allow" in result.stderr


def test_a_300_character_stack_name_exits_2() -> None:
    result = run_main("plan", "--stack", "s" * 300)
    assert result.code == 2, result.stderr
    assert "allowed: a Pulumi stack name: up to 100 letters, digits, -, _ and ." in result.stderr


@pytest.mark.parametrize("flag", ["--grace-minutes", "--horizon-hours"])
def test_status_limits_beyond_the_longest_block_exit_2(flag: str) -> None:
    result = run_main("status", "--stack", "gb200-x72", flag, "99999999999999999999")
    assert result.code == 2, result.stderr
    assert f"{flag}: got 99999999999999999999; allowed: 0 to " in result.stderr
    assert "(182 days, the longest Capacity Block)" in result.stderr


PLAN = ("plan", "--stack", "gb200-x72", "--project-dir", str(ROOT))


def test_closed_stdout_exits_2_with_a_message() -> None:
    result = run_process(*PLAN, stdout=None, preexec_fn=lambda: os.close(1))
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith("ultraserver: standard output was closed before the report was written")


def test_stdout_pipe_without_a_reader_exits_2_with_a_message() -> None:
    read, write = os.pipe()
    os.close(read)
    try:
        result = run_process(*PLAN, stdout=write)
    finally:
        os.close(write)
    assert result.returncode == 2, result.stderr
    assert result.stderr.rstrip().endswith("redirect it to a file or /dev/null")
    assert "Traceback" not in result.stderr and "Exception ignored" not in result.stderr


@pytest.mark.parametrize(
    "args",
    [
        ("plan", "--stack", "gb200-x72", "--deployed"),
        ("plan", "--stack", "gb200-x72", "--policy-config"),
        ("verify", "--stack", "gb200-x72", "--from-file"),
    ],
)
def test_a_fifo_with_no_writer_is_refused_not_waited_on(tmp_path: Path, args: tuple[str, ...]) -> None:
    fifo = tmp_path / "input"
    os.mkfifo(fifo)
    result = run_process(*args, str(fifo), "--project-dir", str(ROOT))
    assert result.returncode == 2, result.stderr
    assert f"{args[-1]} {str(fifo)!r}" in result.stderr
    assert "a FIFO (named pipe), not a regular file" in result.stderr


def test_debug_prints_the_traceback_without_suggesting_debug(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(_: object) -> int:
        raise RuntimeError("boom")

    monkeypatch.setattr(cli_plan, "cmd_plan", broken)
    result = run_main("--debug", "plan", "--stack", "gb200-x72")
    assert result.code == 3
    assert "Traceback" in result.stderr
    assert result.stderr.rstrip().endswith("internal error: RuntimeError: boom")
    assert "rerun with --debug" in run_main("plan", "--stack", "gb200-x72").stderr


@pytest.mark.parametrize(
    ("path", "role"),
    [
        ("stacks/Pulumi.gb200-x72.yaml", "the stack file"),
        ("Pulumi.yaml", "the project file"),
        ("__main__.py", "the Pulumi program"),
        ("deployed.json", "--deployed"),
        ("policy.json", "--policy-config"),
    ],
)
@pytest.mark.parametrize("force", [(), ("--force",)], ids=["plain", "forced"])
def test_plan_json_never_writes_onto_a_file_it_reads(
    tmp_path: Path, path: str, role: str, force: tuple[str, ...]
) -> None:
    """--force is for outputs: a file the plan reads is refused with it too."""
    project = copy_project(tmp_path / "project")
    (project / "policy.json").write_text("{}")
    assert (
        run_main(
            "plan", "--stack", "gb200-x72", "--project-dir", str(project), "--json", str(project / "deployed.json")
        ).code
        == 0
    )
    before = (project / path).read_bytes()
    result = run_main(
        "plan",
        "--stack",
        "gb200-x72",
        "--project-dir",
        str(project),
        "--deployed",
        str(project / "deployed.json"),
        "--policy-config",
        str(project / "policy.json"),
        "--json",
        str(project / path),
        *force,
    )
    assert result.code == 2, result.stderr
    assert f"allowed: a file the command does not read (it reads this one as {role}; --force is for" in result.stderr
    assert (project / path).read_bytes() == before


@pytest.mark.parametrize(
    ("flag", "name"), [("--json", "notes.json"), ("--graph", "README.md"), ("--html", "page.html")]
)
def test_plan_outputs_overwrite_only_their_earlier_output_unless_forced(tmp_path: Path, flag: str, name: str) -> None:
    target = tmp_path / name
    target.write_text("the user's own words\n")
    refused = run_main("plan", "--stack", "gb200-x72", flag, str(target))
    assert refused.code == 2, refused.stderr
    assert f"allowed: a new file or an earlier {flag} output (this file is neither)" in refused.stderr
    assert target.read_text() == "the user's own words\n"
    assert run_main("plan", "--stack", "gb200-x72", flag, str(target), "--force").code == 0
    written = target.read_text()
    assert written != "the user's own words\n"
    assert run_main("plan", "--stack", "gb200-x72", flag, str(target)).code == 0, "its own earlier output"


def test_yaml_merge_keys_are_read_as_pulumi_reads_them(tmp_path: Path) -> None:
    project = stack_with(
        tmp_path,
        b"  ultraserver-eks:ncclCheck:\n    <<: &base {enabled: true, nodes: 2}\n    enabled: false\n"
        b"  ultraserver-eks:efaCheck:\n    <<: {enabled: false}\n",
    )
    result = run_main("plan", "--stack", "bad", "--project-dir", str(project))
    assert result.code == 0, result.stderr
    duplicate = stack_with(tmp_path / "dup", b"  ultraserver-eks:ncclCheck:\n    enabled: true\n    enabled: false\n")
    refused = run_main("plan", "--stack", "bad", "--project-dir", str(duplicate))
    assert refused.code == 2 and "the key 'enabled' twice" in refused.stderr


def test_a_secret_nested_in_an_object_plans(tmp_path: Path) -> None:
    project = stack_with(
        tmp_path,
        b"  ultraserver-eks:alerts:\n    emailSubscriptions:\n      - secure: v1:c2FsdA==:Y2lwaGVy\n",
    )
    result = run_main("plan", "--stack", "bad", "--project-dir", str(project))
    assert result.code == 0, result.stderr
    # A secret where a rule reads the value further (an ARN's region and account) is refused, saying why.
    arn = stack_with(
        tmp_path / "arn", b"  ultraserver-eks:alerts:\n    snsTopicArn:\n      secure: v1:c2FsdA==:b3duZXI=\n"
    )
    refused = run_main("plan", "--stack", "bad", "--project-dir", str(arn))
    assert refused.code == 2, refused.stderr
    assert "ultraserver-eks:alerts.snsTopicArn  a secret value (encrypted in the stack file;" in refused.stderr


def test_a_bad_secret_names_its_key_and_says_it_is_a_secret(tmp_path: Path) -> None:
    project = stack_with(tmp_path, b"  ultraserver-eks:ncclCheck:\n    secure: v1:c2FsdA==:Y2lwaGVy\n")
    result = run_main("plan", "--stack", "bad", "--project-dir", str(project))
    assert result.code == 2, result.stderr
    assert "ultraserver-eks:ncclCheck  a secret value (encrypted in the stack file;" in result.stderr
    assert "placeholder" not in result.stderr


@pytest.mark.parametrize("variable", ["AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE"])
@pytest.mark.parametrize("command", ["preflight", "status"])
def test_an_unparsable_aws_file_exits_2_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, variable: str, command: str
) -> None:
    broken = tmp_path / "aws-file"
    broken.write_text("region = us-east-1\n[default\n")  # a setting outside any [section], a broken header
    monkeypatch.setenv(variable, str(broken))
    for name in ("AWS_PROFILE", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    run = run_main(command, "--stack", "gb200-x72")
    assert run.code == 2, run.stderr
    assert f"the AWS config or credentials file {broken} cannot be parsed" in run.stderr
    assert "point AWS_CONFIG_FILE / AWS_SHARED_CREDENTIALS_FILE at a valid file" in run.stderr
    assert "internal error" not in run.stderr


def test_a_credential_process_that_never_answers_ends_preflight_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ultraserver.preflight import clients

    config = tmp_path / "aws-config"
    config.write_text("[default]\ncredential_process = sleep 30\nregion = us-east-1\n")
    monkeypatch.setenv("AWS_CONFIG_FILE", str(config))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    for name in ("AWS_PROFILE", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(clients, "CREDENTIAL_PROCESS_SECONDS", 1)
    run = run_main("preflight", "--stack", "gb200-x72")
    assert run.code == 2, run.stderr
    assert "the credential_process of AWS profile 'default' (`sleep 30`) gave no credentials within 1 s" in run.stderr
    assert "aws sso login" in run.stderr


@pytest.mark.parametrize(
    ("mirror", "shown"),
    [
        ("https://admin:hunter2@charts.example.com/repo", "'https://***@charts.example.com/repo'"),
        ("oci://robot:hunter2@registry.example.com/charts", "'oci://***@registry.example.com/charts'"),
        ('"https://charts.example.com/repo?token=hunter2"', "'https://charts.example.com/repo?token=***'"),
    ],
)
def test_a_secret_in_a_refused_chart_mirror_is_not_echoed(tmp_path: Path, mirror: str, shown: str) -> None:
    project = copy_project(tmp_path / "project")
    stack = project / "stacks" / "Pulumi.gb200-x72.yaml"
    stack.write_text(stack.read_text() + f"  ultraserver-eks:kubernetes:\n    chartMirror: {mirror}\n")
    run = run_main("plan", "--stack", "gb200-x72", "--project-dir", str(project))
    assert run.code == 2, run.stderr
    assert "hunter2" not in run.stdout + run.stderr
    assert f"ultraserver-eks:kubernetes.chartMirror  {shown}" in run.stderr


@pytest.mark.parametrize("moment", ["2099-01-01T00:00:00Z", "1970-01-01T00:00:00Z"])
@pytest.mark.parametrize(
    "args", [("rehearse", "--stack", "gb200-x72", "--at"), ("plan", "--stack", "gb200-x72", "--now")]
)
def test_a_moment_outside_the_known_eks_calendar_names_the_flag_not_the_version(
    args: tuple[str, ...], moment: str
) -> None:
    from ultraserver.facts.kubernetes import eks_versions
    from ultraserver.facts.pins import ami

    first, last = eks_versions.offered_span(tuple(ami.RELEASE_VERSIONS)) or ()
    run = run_main(*args, moment)
    assert run.code == 2, run.stderr
    assert f"argument {args[-1]}: got {moment!r}; allowed: a moment from {first} to {last}" in run.stderr
    assert "kubernetesVersion" not in run.stderr


def test_a_region_that_does_not_exist_gets_a_fix(tmp_path: Path) -> None:
    project = copy_project(tmp_path / "project")
    stack = project / "stacks" / "Pulumi.gb200-x72.yaml"
    stack.write_text(stack.read_text().replace("aws:region: us-east-1", "aws:region: mars-1", 1))
    run = run_main("plan", "--stack", "gb200-x72", "--project-dir", str(project))
    assert run.code == 2 and "aws:region  'mars-1'" in run.stderr, run.stderr
    assert "fix: use your Capacity Block's region: P6e-GB200 is offered in us-east-1-dfw-2a" in run.stderr
    flag = run_main("preflight", "--stack", "gb200-x72", "--region", "mars-1")
    assert flag.code == 2 and "fix: use your Capacity Block's region" in flag.stderr
