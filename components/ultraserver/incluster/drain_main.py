"""The reclaim drain CronJob's entry point: one run of ``drain.run_once`` through the pod's service account.

The ConfigMap mounts this file and the modules it imports side by side in a stock Python image (no image ships the
ultraserver package), so they import the standard library only, and find each other next to them.
"""

from __future__ import annotations

import json
import os
import ssl
import sys
import urllib.request
from collections.abc import Mapping
from datetime import datetime, timezone
from typing import Any

try:
    from ultraserver.incluster import aws_query as aws
    from ultraserver.incluster import drain_watch as watch
    from ultraserver.incluster import repair
    from ultraserver.incluster.drain import Block, run_once
    from ultraserver.incluster.recheck import MPIJOB_API, run_checks_once
    from ultraserver.incluster.rest import RestApi, failure, gpu_nodes, status_of
    from ultraserver.incluster.spares import findings as spare_findings
    from ultraserver.incluster.spares import groups_from
    from ultraserver.incluster.spares import run_once as keep_spares
    from ultraserver.incluster.warning_queue import WarningQueue, pod_credentials, read_warnings
except ImportError:  # in the cluster: the mounted directory is on sys.path
    import aws_query as aws  # type: ignore[no-redef]
    import drain_watch as watch  # type: ignore[no-redef]
    import repair  # type: ignore[no-redef]
    from drain import Block, run_once  # type: ignore[no-redef]
    from recheck import MPIJOB_API, run_checks_once  # type: ignore[no-redef]
    from rest import RestApi, failure, gpu_nodes, status_of  # type: ignore[no-redef]
    from spares import findings as spare_findings  # type: ignore[no-redef]
    from spares import groups_from  # type: ignore[no-redef]
    from spares import run_once as keep_spares  # type: ignore[no-redef]
    from warning_queue import WarningQueue, pod_credentials, read_warnings  # type: ignore[no-redef]

SERVICE_ACCOUNT = "/var/run/secrets/kubernetes.io/serviceaccount"


class StdlibApi(RestApi):
    """The API server through the pod's service account, with urllib only."""

    def __init__(self, folder: str = SERVICE_ACCOUNT, env: Mapping[str, str] = os.environ) -> None:
        host = env["KUBERNETES_SERVICE_HOST"]
        self._base = f"https://{host}:{env.get('KUBERNETES_SERVICE_PORT', '443')}"
        with open(f"{folder}/token") as handle:
            self._token = handle.read().strip()
        self._tls = ssl.create_default_context(cafile=f"{folder}/ca.crt")

    def _call(self, method: str, path: str, body: Any = None, content: str = "application/json") -> Any:
        data = None if body is None else json.dumps(body).encode()
        headers = {"Authorization": f"Bearer {self._token}", "Content-Type": content, "Accept": "application/json"}
        request = urllib.request.Request(self._base + path, data=data, headers=headers, method=method)
        with urllib.request.urlopen(request, context=self._tls, timeout=60) as response:
            return json.load(response)


def _checks(path: str) -> list[dict[str, Any]]:
    """The check jobs to make again at each join; none without the file (a drain deployed without checks)."""
    if not path or not os.path.isfile(path):
        return []
    with open(path) as handle:
        return list(json.load(handle))


def queued_warnings(
    now: datetime, creds: dict[str, str] | None, failures: list[dict[str, Any]], env: Mapping[str, str] = os.environ
) -> list[dict]:
    """EC2's expiration warnings from the queue in WARNING_QUEUE_URL; none when the drain was deployed without one or
    the queue cannot be read (a failure, reported)."""
    url = env.get("WARNING_QUEUE_URL", "")
    if not url or creds is None:
        return []
    try:
        return list(read_warnings(WarningQueue(url, env["AWS_REGION"], creds), now))
    except (OSError, KeyError, ValueError) as error:  # urllib's errors are OSErrors
        # The drain by the computed cut-off must run whatever the queue does; the next minute reads it again.
        failures.append(failure("read-warning-queue", url, error, aws=True))
        return []


class Aws:
    """The AWS calls of one run, through the pod's Pod Identity credentials; each failure is recorded, never raised."""

    def __init__(self, env: Mapping[str, str], failures: list[dict[str, Any]], query: Any = None) -> None:
        self.region, self.failures, self.creds, self._query = env.get("AWS_REGION", ""), failures, None, query
        if self.region and query is None:
            try:
                self.creds = pod_credentials()
            except (OSError, KeyError, ValueError) as error:
                failures.append(
                    failure("pod-identity-credentials", "AWS_CONTAINER_CREDENTIALS_FULL_URI", error, aws=True)
                )

    def api(self, service: str) -> Any:
        """The service's client: ``query(service)`` when given (another transport), else the Query API signed with
        the pod's credentials; None without them."""
        if self._query is not None:
            return self._query(service)
        return aws.QueryApi(service, self.region, self.creds) if self.creds is not None else None

    def attempt(self, step: str, target: str, call: Any, *args: Any) -> Any:
        """``call(*args)``; None (and a recorded failure) when it fails."""
        try:
            return call(*args)
        except (OSError, aws.QueryError, ValueError, KeyError) as error:
            self.failures.append(failure(step, target, error, aws=True))
            return None


def ec2_dates(cloud: Aws, blocks: list[Block], now: datetime) -> dict[str, dict[str, str]]:
    """Start, end and state of every listed reservation as EC2 holds them; {} when EC2 cannot be read."""
    ec2, ids = cloud.api("ec2"), sorted({r for b in blocks for r in b.reservations})
    if ec2 is None or not ids:
        return {}
    found = cloud.attempt("describe-capacity-reservations", ",".join(ids), aws.capacity_reservations, ec2, ids, now)
    return found or {}


def regrow_groups(cloud: Aws, stack: list[Block], live: list[Block], now: datetime, cluster: str) -> list[dict]:
    """Scale back up (and move the scale-down of) the groups of blocks whose end EC2 moved later; the moves made."""
    scaling = cloud.api("autoscaling")
    if scaling is None or not cluster or not any(e.end > s.end for s, e in zip(stack, live, strict=True)):
        return []
    groups = cloud.attempt("describe-auto-scaling-groups", cluster, aws.cluster_groups, scaling, cluster, now) or []
    actions = {}
    for block in stack:
        group = watch.block_group(groups, block.group) if block.group else None
        if group is not None:
            found = cloud.attempt(
                "describe-scheduled-actions", group["name"], aws.scheduled_actions, scaling, group["name"], now
            )
            actions[group["name"]] = found or {}
    done = []
    for move in watch.regrow(stack, live, groups, actions, now):
        call: tuple[Any, ...] = (aws.set_desired, scaling, move["group"], move["size"], now)
        if move["kind"] == "put-scale-down":
            call = (aws.put_scale_down, scaling, move["group"], move["name"], move["at"], move["size"], now)
        before = len(cloud.failures)
        cloud.attempt(move["kind"], move["group"], *call)
        if len(cloud.failures) == before:
            done.append(move)
    return done


def reboot_nodes(api: RestApi, cloud: Aws, nodes: list[dict[str, Any]], groups: list[Any], now: datetime) -> list[dict]:
    """Reboot each node ``repair.wanted`` names through EC2 RebootInstances; the reboots asked for. The node is marked
    first, so no later run reboots it again for this failure whatever happens to this one; a refused call takes the
    mark off again (the next minute tries again) and is reported, like a mark that cannot be written."""
    done, ec2 = [], None
    for action in repair.wanted(nodes, groups, now):
        path, notes = f"/api/v1/nodes/{action['name']}", repair.marks(action, now)
        ec2 = ec2 or cloud.api("ec2")
        if ec2 is None:
            no_client = OSError("no AWS credentials or region in the drain's pod")
            cloud.failures.append(failure("reboot-instances", action["instance"], no_client, aws=True))
            continue
        try:
            api.patch(path, {"metadata": {"annotations": notes}})
        except Exception as err:
            cloud.failures.append(failure("mark-reboot", action["name"], err))
            continue
        before = len(cloud.failures)
        cloud.attempt("reboot-instances", action["instance"], aws.reboot_instance, ec2, action["instance"], now)
        if len(cloud.failures) == before:
            done.append(action)
            continue
        try:
            api.patch(path, {"metadata": {"annotations": dict.fromkeys(notes)}})
        except Exception as err:  # the mark stays: no reboot for this failure, and the refused call is paged
            cloud.failures.append(failure("unmark-reboot", action["name"], err))
    return done


def _state_path(env: Mapping[str, str]) -> str:
    namespace, _, name = env.get("ALERT_STATE", "").partition("/")
    return f"/api/v1/namespaces/{namespace}/configmaps/{name}"


def read_state(api: RestApi, env: Mapping[str, str]) -> dict[str, Any] | None:
    """The drain's alert ConfigMap (what it has sent, when it regrew a group); None when unset or unreadable, an
    empty one when it does not exist yet."""
    if not env.get("ALERT_STATE"):
        return None
    try:
        return api.get(_state_path(env))
    except Exception as err:
        return {"data": {}} if status_of(err) == 404 else None


def send_alerts(
    api: RestApi,
    cloud: Aws,
    findings: list[dict[str, str]],
    now: datetime,
    env: Mapping[str, str],
    state: dict[str, Any] | None,
    regrown: dict[str, datetime],
) -> list[str]:
    """Publish the findings not yet sent to ALERT_TOPIC_ARN and remember them, and the groups regrown, in the alert
    ConfigMap (``state``, as read at the run's start); the keys sent."""
    topic = env.get("ALERT_TOPIC_ARN", "")
    sns = cloud.api("sns")
    if not topic or sns is None:
        return []
    sent = watch.alert_state(state)
    published = []
    for item in watch.to_send(findings, sent, now):
        try:
            aws.publish(sns, topic, item["subject"], item["message"], now)
            published.append(item["key"])
        except (OSError, aws.QueryError) as error:  # stderr only: the topic is the one way to page anyone
            print(json.dumps({"alertError": str(error), "key": item["key"]}), file=sys.stderr)
    if sent is not None and state is not None:
        namespace, _, name = env["ALERT_STATE"].partition("/")
        keep = sorted({f["key"] for f in findings} & (sent | set(published)))
        data = {
            watch.ALERTED_KEY: json.dumps(keep),
            watch.REGROWN_KEY: json.dumps({k: watch.iso(at) for k, at in sorted(regrown.items())}),
        }
        try:
            if state.get("metadata"):
                api.patch(_state_path(env), {"data": data})
            else:
                metadata = {"name": name, "namespace": namespace}
                api.post(
                    f"/api/v1/namespaces/{namespace}/configmaps",
                    {"apiVersion": "v1", "kind": "ConfigMap", "metadata": metadata, "data": data},
                )
        except Exception as error:  # the next run sends again on the half hour at worst
            print(json.dumps({"alertStateError": str(error)}), file=sys.stderr)
    return published


def _drift_jobs(api: RestApi, failures: list[dict[str, Any]], env: Mapping[str, str]) -> list[dict[str, Any]]:
    namespace, _, name = env.get("DRIFT_CHECK", "").partition("/")
    if not name:
        return []
    path = f"/apis/batch/v1/namespaces/{namespace}/jobs?labelSelector=ultraserver.io/drift-check={name}"
    try:
        return list(api.get(path).get("items") or [])
    except Exception as err:
        failures.append(failure("list-drift-jobs", f"{namespace}/{name}", err))
        return []


def _live_checks(api: RestApi, manifests: list[dict[str, Any]], failures: list[dict[str, Any]]) -> list[dict]:
    live: list[dict[str, Any]] = []
    for namespace in sorted({m["metadata"]["namespace"] for m in manifests}):
        try:
            live += api.get(f"{MPIJOB_API}/namespaces/{namespace}/mpijobs").get("items") or []
        except Exception as err:
            failures.append(failure("list-checks", namespace, err))
    return live


def _reread(api: RestApi, nodes: list[dict[str, Any]], failures: list[dict[str, Any]]) -> list[dict[str, Any]]:
    try:
        return gpu_nodes(api)
    except Exception as err:
        failures.append(failure("list-nodes", "nodes", err))
        return nodes


def run(
    api: RestApi, now: datetime, env: Mapping[str, str] = os.environ, query: Any = None
) -> tuple[list[dict], list[dict]]:
    """One run: EC2's dates, the drain, the spares, the reboots of self-managed nodes, the checks at each join, the
    regrowth of extended blocks, then the alerts; the actions taken and the findings (each published once to the
    alert topic). ``query``: see ``Aws.api``."""
    stack_name = env.get("CLUSTER_NAME", "") or "(unnamed stack)"
    role = env.get("DRAIN_ACCOUNT", "the drain's service account")
    stack = [Block.from_json(b) for b in json.loads(env["BLOCKS"])]
    failures: list[dict[str, Any]] = []
    cloud = Aws(env, failures, query)
    state = read_state(api, env)
    regrown = watch.regrown_state(state, now)
    held = ec2_dates(cloud, stack, now)
    live = watch.as_ec2_holds(stack, held)
    warnings = json.loads(env.get("WARNINGS") or "[]") + queued_warnings(now, cloud.creds, failures, env)
    checks = _checks(env.get("CHECKS_FILE", ""))
    taken: list[dict[str, Any]] = []
    findings = watch.ec2_findings(stack_name, stack, held) + watch.switch_findings(stack_name, live, now)
    try:
        nodes = gpu_nodes(api)
    except Exception as error:  # without the nodes nothing can be drained: that is the alert
        findings.append(watch.run_finding(stack_name, error))
        nodes = None
    if nodes is not None:
        drained = run_once(api, live, now, env.get("CLUSTER_QUEUE", ""), warnings, nodes, failures)
        taken += drained
        # Spares before the checks: a node held back as a spare is tainted before a check job can land on it.
        spares = groups_from(env.get("SPARES", ""))
        try:
            if any(a["kind"] in ("cordon", "release") for a in drained):
                # The spares patch a node's whole taint list: from the list read before the drain cut the node
                # off, they would drop its reclaim taint (and a released node would get it back).
                nodes = gpu_nodes(api)
            taken += keep_spares(api, spares, now, nodes)
        except Exception as err:
            failures.append(failure("keep-spares", "nodes", err))
        try:
            rebooted = reboot_nodes(api, cloud, nodes, spares, now)
        except Exception as err:  # a node the controller cannot read must not stop the run's other steps
            failures.append(failure("reboot-nodes", "nodes", err))
            rebooted = []
        if rebooted:
            taken += rebooted
            nodes = _reread(api, nodes, failures)  # the findings name the reboots from the marks on the nodes
        findings += spare_findings(stack_name, nodes, spares, now) + repair.findings(stack_name, nodes, spares, now)
        try:
            taken += run_checks_once(api, checks, live, now, nodes)
        except Exception as err:
            failures.append(failure("recreate-check", "mpijobs", err))
        findings += watch.check_findings(stack_name, checks, _live_checks(api, checks, failures), live, now)
        findings += watch.drift_findings(stack_name, _drift_jobs(api, failures, env))
    grown = regrow_groups(cloud, stack, live, now, env.get("CLUSTER_NAME", ""))
    taken += grown
    regrown |= {m["ultraserver"]: now for m in grown if m["kind"] == "scale-up"}
    if nodes is not None:
        findings += watch.empty_block_findings(stack_name, live, nodes, now, regrown)
    findings += watch.call_findings(stack_name, failures, role)
    send_alerts(api, cloud, findings, now, env, state, regrown)
    return taken, findings


def main(now: datetime | None = None) -> int:
    """One run; print each action taken and each finding; 0 when nothing needed a person."""
    taken, findings = run(StdlibApi(), now or datetime.now(timezone.utc))
    for action in taken:
        print(json.dumps(action, sort_keys=True))
    for item in findings:
        print(json.dumps(item, sort_keys=True), file=sys.stderr)
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
