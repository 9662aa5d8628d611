"""Helm's post-renderer in ``rehearse --deploy``: the chart's objects less those no rehearsal applies.

Admission webhooks and aggregated APIs (``rehearse/charts.py`` NOT_APPLIED) are dropped, as the ``--api real``
tier drops them: their servers are pods that never run here, and a webhook that fails closed (Kueue's) would refuse
every object of its kinds after it. Helm runs this as ``postrender`` (the Kubernetes provider's Release input): the
rendered manifests on stdin, the kept ones on stdout.

``python -m ultraserver.rehearse.postrender`` filters stdin to stdout.
"""

from __future__ import annotations

import sys
from typing import TextIO

import yaml

from ultraserver.rehearse.charts import NOT_APPLIED


def kept(text: str) -> str:
    """The YAML stream less the documents of the kinds no rehearsal applies."""
    documents = [d for d in yaml.safe_load_all(text) if isinstance(d, dict) and d.get("kind") not in NOT_APPLIED]
    return yaml.safe_dump_all(documents, sort_keys=False)


def main(stdin: TextIO = sys.stdin, stdout: TextIO = sys.stdout) -> int:
    stdout.write(kept(stdin.read()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
