package server

// infoHelp explains the INFO fields people ask about, in plain words.
var infoHelp = map[string]string{
	"redis_version":     "The Redis version this server runs.",
	"uptime_in_seconds": "How long since the server started; a restart empties a server without persistence.",
	"role":              "master serves writes; slave (replica) copies a master.",

	"connected_clients":          "Client connections open now, Keydeck's own included (see the clients page).",
	"blocked_clients":            "Clients waiting in a blocking command (BLPOP, XREAD BLOCK, WAIT …).",
	"maxclients":                 "The most connections the server accepts; past it, new ones are refused (rejected_connections).",
	"rejected_connections":       "Connections refused because maxclients was reached, since the server started. Any at all means clients could not connect.",
	"total_connections_received": "Connections accepted since start; growing fast means clients reconnect instead of pooling.",

	"used_memory":             "Memory Redis allocated for data and its own structures (what maxmemory is compared with).",
	"used_memory_rss":         "Memory the operating system gives the process (resident set): used memory plus fragmentation and allocator overhead.",
	"used_memory_peak":        "The most memory ever allocated since start.",
	"used_memory_dataset":     "Memory used by the data itself, without the server's overhead.",
	"maxmemory":               "The memory limit; 0 means none (the server grows until the machine runs out).",
	"maxmemory_policy":        "What happens at maxmemory: noeviction refuses writes; allkeys-*/volatile-* evict keys.",
	"mem_fragmentation_ratio": "RSS ÷ used memory. About 1.0–1.5 is normal; well above 1.5 is memory lost to fragmentation (active defrag may help); below 1 means the server is swapping, which makes it slow.",
	"mem_fragmentation_bytes": "RSS minus used memory: the bytes fragmentation costs.",
	"total_system_memory":     "The machine's memory.",

	"rdb_changes_since_last_save": "Writes not yet in an RDB snapshot: what a crash now would lose without AOF.",
	"rdb_last_bgsave_status":      "Whether the last snapshot succeeded; err often means the disk is full or not writable.",
	"rdb_last_save_time":          "When the last snapshot was saved.",
	"aof_enabled":                 "1 when every write is appended to the AOF (durable across restarts).",
	"aof_last_bgrewrite_status":   "Whether the last AOF rewrite succeeded.",
	"loading":                     "1 while the server loads its data at start; it answers few commands until then.",

	"instantaneous_ops_per_sec": "Commands per second, over the last few seconds.",
	"total_commands_processed":  "Commands run since start.",
	"keyspace_hits":             "Key lookups that found their key.",
	"keyspace_misses":           "Key lookups that found nothing.",
	"keyspace_hit_ratio":        "Hits ÷ (hits + misses): the share of lookups that found their key (computed by Keydeck). For a cache, low means most reads miss.",
	"evicted_keys":              "Keys removed because maxmemory was reached (by maxmemory_policy). Any on a store that is not a cache means data was lost.",
	"evicted_clients":           "Clients disconnected because their buffers exceeded maxmemory-clients.",
	"expired_keys":              "Keys removed because their TTL passed.",
	"expired_stale_perc":        "Estimated share of keys with a TTL that have expired but are not removed yet.",
	"latest_fork_usec":          "How long the last fork (for a snapshot or AOF rewrite) blocked the server.",
	"total_error_replies":       "Error replies sent since start (wrong commands, refused writes, ACL denials).",
	"total_net_input_bytes":     "Bytes received from clients since start.",
	"total_net_output_bytes":    "Bytes sent to clients since start.",
	"pubsub_channels":           "Channels with at least one subscriber.",

	"connected_slaves":           "Replicas connected to this server.",
	"master_link_status":         "On a replica: up when it is connected to its master and copying.",
	"master_last_io_seconds_ago": "On a replica: seconds since it last heard from its master.",
	"master_repl_offset":         "The replication stream position; replicas behind it are lagging.",
	"used_cpu_sys":               "CPU seconds the server spent in the kernel since start.",
	"used_cpu_user":              "CPU seconds the server spent in its own code since start.",
	"cluster_enabled":            "1 when the server is a Redis Cluster node.",
}
