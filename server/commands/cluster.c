/* cluster.c - the CLUSTER command of a server without cluster support, as
 * Redis 7.0 answers with cluster-enabled no: every subcommand is there. */
#include "commands.h"

/* Redis's clusterCommand refuses every subcommand, HELP and KEYSLOT too,
 * before looking at it; arity and unknown names are checked earlier, by
 * the dispatch, as for any container. */
static void cluster_disabled(client *c) { reply_error(c, "ERR This instance has cluster support disabled"); }

void cmd_cluster(client *c) { subcommand_dispatch(c); }

#define A CMD_ADMIN
#define NS CMD_NOSCRIPT
#define L CMD_LOADING
#define S CMD_STALE

/* Redis 7.0.15's subcommands, with its arities and flags (COMMAND INFO
 * replays the rest from meta_table.c). */
const command cluster_subcommands[] = {
    {"addslots", cluster_disabled, -3, A | S, 0, 0, 0, "cluster", "3.0.0", "Assign new hash slots to receiving node", "slot [slot ...]", NULL},
    {"addslotsrange", cluster_disabled, -4, A | S, 0, 0, 0, "cluster", "7.0.0", "Assign new hash slots to receiving node", "start-slot end-slot [start-slot end-slot ...]", NULL},
    {"bumpepoch", cluster_disabled, 2, A | S, 0, 0, 0, "cluster", "3.0.0", "Advance the cluster config epoch", NULL, NULL},
    {"count-failure-reports", cluster_disabled, 3, A | S, 0, 0, 0, "cluster", "3.0.0", "Return the number of failure reports active for a given node", "node-id", NULL},
    {"countkeysinslot", cluster_disabled, 3, S, 0, 0, 0, "cluster", "3.0.0", "Return the number of local keys in the specified hash slot", "slot", NULL},
    {"delslots", cluster_disabled, -3, A | S, 0, 0, 0, "cluster", "3.0.0", "Set hash slots as unbound in receiving node", "slot [slot ...]", NULL},
    {"delslotsrange", cluster_disabled, -4, A | S, 0, 0, 0, "cluster", "7.0.0", "Set hash slots as unbound in receiving node", "start-slot end-slot [start-slot end-slot ...]", NULL},
    {"failover", cluster_disabled, -2, A | S, 0, 0, 0, "cluster", "3.0.0", "Forces a replica to perform a manual failover of its master.", "[FORCE|TAKEOVER]", NULL},
    {"flushslots", cluster_disabled, 2, A | S, 0, 0, 0, "cluster", "3.0.0", "Delete a node's own slots information", NULL, NULL},
    {"forget", cluster_disabled, 3, A | S, 0, 0, 0, "cluster", "3.0.0", "Remove a node from the nodes table", "node-id", NULL},
    {"getkeysinslot", cluster_disabled, 4, S, 0, 0, 0, "cluster", "3.0.0", "Return local key names in the specified hash slot", "slot count", NULL},
    {"help", cluster_disabled, 2, L | S, 0, 0, 0, "cluster", "5.0.0", "Show helpful text about the different subcommands", NULL, NULL},
    {"info", cluster_disabled, 2, S, 0, 0, 0, "cluster", "3.0.0", "Provides info about Redis Cluster node state", NULL, NULL},
    {"keyslot", cluster_disabled, 3, S, 0, 0, 0, "cluster", "3.0.0", "Returns the hash slot of the specified key", "key", NULL},
    {"links", cluster_disabled, 2, S, 0, 0, 0, "cluster", "7.0.0", "Returns a list of all TCP links to and from peer nodes in cluster", NULL, NULL},
    {"meet", cluster_disabled, -4, A | S, 0, 0, 0, "cluster", "3.0.0", "Force a node cluster to handshake with another node", "ip port [cluster_bus_port]", NULL},
    {"myid", cluster_disabled, 2, S, 0, 0, 0, "cluster", "3.0.0", "Return the node id", NULL, NULL},
    {"nodes", cluster_disabled, 2, S, 0, 0, 0, "cluster", "3.0.0", "Get Cluster config for the node", NULL, NULL},
    {"replicas", cluster_disabled, 3, A | S, 0, 0, 0, "cluster", "5.0.0", "List replica nodes of the specified master node", "node-id", NULL},
    {"replicate", cluster_disabled, 3, A | S, 0, 0, 0, "cluster", "3.0.0", "Reconfigure a node as a replica of the specified master node", "node-id", NULL},
    {"reset", cluster_disabled, -2, A | NS | S, 0, 0, 0, "cluster", "3.0.0", "Reset a Redis Cluster node", "[HARD|SOFT]", NULL},
    {"saveconfig", cluster_disabled, 2, A | S, 0, 0, 0, "cluster", "3.0.0", "Forces the node to save cluster state on disk", NULL, NULL},
    {"set-config-epoch", cluster_disabled, 3, A | S, 0, 0, 0, "cluster", "3.0.0", "Set the configuration epoch in a new node", "config-epoch", NULL},
    {"setslot", cluster_disabled, -4, A | S, 0, 0, 0, "cluster", "3.0.0", "Bind a hash slot to a specific node", "slot IMPORTING node-id|MIGRATING node-id|NODE node-id|STABLE", NULL},
    {"shards", cluster_disabled, 2, S, 0, 0, 0, "cluster", "7.0.0", "Get array of cluster slots to node mappings", NULL, NULL},
    {"slaves", cluster_disabled, 3, A | S, 0, 0, 0, "cluster", "3.0.0", "List replica nodes of the specified master node", "node-id", NULL},
    {"slots", cluster_disabled, 2, S, 0, 0, 0, "cluster", "3.0.0", "Get array of Cluster slot to node mappings", NULL, NULL},
    {NULL, NULL, 0, 0, 0, 0, 0, NULL, NULL, NULL, NULL, NULL},
};
