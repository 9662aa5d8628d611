"""Entry point of the ultraserver-gb200 policy pack; the rules live in ultraserver.policy (importable, tested)."""

from pulumi_policy import EnforcementLevel, PolicyPack
from ultraserver.policy.pack import PACK_NAME, to_pulumi_policies

# PolicyPack starts the analyzer's gRPC server and blocks: never import this module from tests.
PolicyPack(name=PACK_NAME, policies=to_pulumi_policies(), enforcement_level=EnforcementLevel.MANDATORY)
