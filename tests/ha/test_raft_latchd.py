"""Three latchd nodes on Raft under faults (kill -9 and restart, SIGSTOP /
SIGCONT, partitions through the fault proxy, link delays), with Redisson
fenced lock clients: the checker must find zero violations. One run per
seed in LATCHD_HA_SEEDS, LATCHD_HA_SECONDS each (see ha_settings.py)."""

import pytest

import ha_cluster
import ha_settings
import ha_workload

WHY_NOT = ha_cluster.raft_support()


@pytest.mark.skipif(WHY_NOT is not None, reason=str(WHY_NOT))
@pytest.mark.skipif("latchd" not in ha_settings.KINDS, reason="LATCHD_SERVERS excludes latchd")
@pytest.mark.parametrize("seed", ha_settings.SEEDS)
def test_latchd_raft_faults(seed):
    cluster = ha_cluster.LatchdRaftCluster(election_ms=1000, heartbeat_ms=100)
    failed = True
    try:
        cluster.boot()
        run = ha_workload.Run(cluster, seed, ha_settings.SECONDS, ha_workload.raft_nemesis,
                              clients=5, locks=3, lease_s=5.0, op_timeout=3.0, log=ha_settings.log)
        ha_settings.need_scripts(run)
        violations, summary = run.execute()
        ha_settings.report(run, violations, summary)
        assert violations == [], violations[:20]
        assert run.protocol_errors == [], run.protocol_errors[:5]
        crashed = {name: n.crashes for name, n in cluster.nodes.items() if n.crashes}
        assert not crashed, "nodes exited on their own (statuses): %s\n%s" % (crashed, cluster.logs())
        # A run that did nothing proves nothing.
        assert summary.get("acquire:ok", 0) >= 10, summary
        assert summary.get("read:ok", 0) == len(run.locks), \
            "no node answered the final reads once healed: %s\n%s" % (summary, cluster.logs())
        failed = False
    finally:
        if failed:
            ha_settings.log(cluster.logs())
        problems = cluster.stop(keep_dir=failed and ha_settings.KEEP)
    # After the clean stop: sanitizer reports (leaks are written at exit).
    if problems:
        ha_settings.log(problems.pop("logs"))
    assert not problems, "%s (the nodes' logs are in the captured output)" % problems
