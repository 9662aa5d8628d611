"""The offline plan: run the real Pulumi program in-process under mocks and record what it would create."""

from .engine import Plan, PlanResource, record, run_plan

__all__ = ["Plan", "PlanResource", "record", "run_plan"]
