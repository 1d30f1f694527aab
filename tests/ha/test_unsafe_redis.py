"""The checker must catch an unsafe target: redis-server with 2 asynchronous
replicas (their replication stream delayed 300 ms by the fault proxy) and a
failover by kill -9 + REPLICAOF NO ONE, under the same workload as the
latchd runs. Acknowledged locks and INCRs still in the stream are lost; a
run that finds no violation means the checker or the workload is blind."""

import pytest

import ha_cluster
import ha_settings
import ha_workload


@pytest.mark.skipif("redis" not in ha_settings.KINDS, reason="LATCHD_SERVERS excludes redis")
@pytest.mark.parametrize("seed", [1])
def test_checker_catches_async_replica_failover(seed):
    cluster = ha_cluster.RedisAsyncCluster(repl_delay=0.3)
    try:
        cluster.boot()
        run = ha_workload.Run(cluster, seed, 10, ha_workload.redis_failover_nemesis,
                              clients=5, locks=2, lease_s=5.0, op_timeout=2.0, log=ha_settings.log)
        ha_settings.need_scripts(run)
        violations, summary = run.execute()
        ha_settings.report(run, violations, summary)
        kinds = {v.split(":", 1)[0] for v in violations}
        assert len(run.faults_done) >= 3, run.faults_done
        # The lost acknowledged writes show as lost INCRs / tokens and as
        # acknowledged locks gone (held twice, seen free while held).
        assert "lost-write" in kinds or "token" in kinds, violations
        assert kinds & {"overlap", "visibility", "token"}, violations
    finally:
        cluster.stop()
