"""The fault suite's knobs (environment) and the shared run-and-report step.

  LATCHD_HA_SECONDS  seconds of faults per seed in the latchd runs (default
                     60; scripts/test passes it through)
  LATCHD_HA_SEEDS    comma list of seeds (default 1,2,3)
  LATCHD_HA_KEEP     1: keep the nodes' directories and logs of a failed run
"""

import os
import sys

import pytest

import ha_checker

SECONDS = float(os.environ.get("LATCHD_HA_SECONDS", "60"))
SEEDS = [int(s) for s in os.environ.get("LATCHD_HA_SEEDS", "1,2,3").split(",") if s.strip()]
KEEP = os.environ.get("LATCHD_HA_KEEP") == "1"
KINDS = [k.strip() for k in (os.environ.get("LATCHD_SERVERS") or "redis,latchd").split(",")]


def log(msg):
    sys.stdout.write(msg + "\n")
    sys.stdout.flush()


def report(run, violations, summary):
    """One paragraph per run for the -rP / -s output."""
    log("seed %d, %.0f s: %d faults, ops %s" % (run.seed, run.seconds, len(run.faults_done), summary))
    log("violations per rule: %s" % (ha_checker.tally(violations) or "none"))
    for e in getattr(run, "protocol_errors", [])[:5]:
        log("  REPLY OUT OF STEP " + e)
    for v in violations[:20]:
        log("  VIOLATION " + v)
    if len(violations) > 20:
        log("  ... %d more" % (len(violations) - 20))
    if violations and run.nemesis_fn.__name__ == "raft_nemesis":
        # What happened around the first two, for whoever reads a failed run.
        for v in violations[:2]:
            log("around: " + v)
            for line in ha_checker.context(run.history.events, v):
                log("    " + line)
        for t, what in run.faults_done:
            log("  fault at %.3f: %s" % (t, what))


def need_scripts(run):
    if run.lock_body is None or run.unlock_body is None:
        from ha_workload import vectors_dir
        pytest.skip("Redisson's fenced lock / unlock script texts not in %s (the fault suite "
                    "sends the real scripts; ../shared/protocol/vectors has them)" % vectors_dir())
