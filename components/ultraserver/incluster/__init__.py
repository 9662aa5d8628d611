"""Programs that run inside the cluster: the reclaim drain (``drain_main``, ``drain``), the fabric checks made again
at each join (``recheck``), EC2's expiration warnings read from SQS with its own SigV4 (``warning_queue``) and the node
drift check (``drift``).

No image ships the ultraserver package: a CronJob mounts these files side by side from a ConfigMap into a stock Python
image (``builders.script_cron_job``). So they import the standard library and each other only
(tests/incluster/test_room.py), and the facts they need are generated into ``copied_facts`` from ``facts/``
(``scripts/regen_incluster_facts.py``). Each imports a sibling as ``ultraserver.incluster.<name>`` in the package and
as ``<name>`` in the cluster.
"""
