"""The one result type and its one report format."""

from __future__ import annotations

from ultraserver.problems import ERROR, INFO, WARNING, ConfigError, Described, Problem, blocking, format_problems, under

URN = "urn:pulumi:dev::ultraserver-eks::ultraserver:index:Platform$aws:ec2/launchTemplate:LaunchTemplate::gpu"


def test_report_aligns_keys_and_shows_allowed_and_fix_unless_info() -> None:
    problems = [
        Problem("gpuNodeGroups[0].localStorage", "RAID10", "RAID0 or mount", "use RAID0", ERROR),
        Problem("imds", "hop limit 2", "", "set 1", WARNING),
        Problem("zone", "opted in", "never shown", "never shown", INFO),
    ]
    assert format_problems(problems).splitlines() == [
        "ERROR    gpuNodeGroups[0].localStorage  RAID10",
        "                                        allowed: RAID0 or mount",
        "                                        fix: use RAID0",
        "WARNING  imds                           hop limit 2",
        "                                        fix: set 1",
        "INFO     zone                           opted in",
    ]


def test_report_puts_a_long_key_on_its_own_line_and_indents_multi_line_values() -> None:
    problems = [Problem(URN, "IMDSv1 is allowed.\nSet http_tokens.", "", ""), Problem("count", 3, "", "")]
    assert format_problems(problems, {ERROR: "MANDATORY"}).splitlines() == [
        f"MANDATORY  {URN}",
        "                  IMDSv1 is allowed.",
        "                  Set http_tokens.",
        "MANDATORY  count  3",
    ]


def test_a_level_without_a_label_shows_in_capitals() -> None:
    assert format_problems([Problem("k", "v", "", "", INFO)], {ERROR: "FAIL"}) == "INFO  k  v"


def test_report_of_nothing_is_empty() -> None:
    assert format_problems([]) == ""


def test_only_errors_block() -> None:
    error, warning = Problem("a", 1, "", ""), Problem("b", 2, "", "", WARNING)
    assert blocking([warning, error]) == [error]


def test_config_error_keeps_its_problems_and_shows_one_line_each() -> None:
    err = ConfigError([Problem("cluster.name", "", "a name", "set it"), Problem("x", 1, "y", "z")])
    assert [p.key for p in err.items] == ["cluster.name", "x"]
    assert str(err).splitlines() == [
        "cluster.name: got ''; allowed: a name; fix: set it",
        "x: got 1; allowed: y; fix: z",
    ]


def test_a_described_value_shows_without_quotes_and_a_written_one_with_them() -> None:
    assert str(Problem("f", Described("larger than 1 MiB"), "at most 1 MiB", "cut it")).startswith(
        "f: got larger than 1 MiB;"
    )
    assert str(Problem("v", "1.3", "a string", "quote it")).startswith("v: got '1.3';")


def test_keys_under_a_prefix() -> None:
    window = under("gpuNodeGroups[0].reservationWindow")
    assert window("scaleDownLeadMinutes") == "gpuNodeGroups[0].reservationWindow.scaleDownLeadMinutes"
    assert window("") == "gpuNodeGroups[0].reservationWindow"
    assert under("blocks")("[1].start") == "blocks[1].start"
