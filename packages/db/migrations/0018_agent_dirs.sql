-- The agent's own directories (issue 33): its config (with the agent token), state and install
-- directories, as paths of its snapshots, from the agent's hello (protocol 12, hello.agent_dirs).
-- The server refuses them, besides the packaged defaults, as source group includes, restore paths
-- and targets, tree paths and download paths, so that no operator reads a host's token through
-- its backups. Empty until a protocol-12 agent says hello: the defaults stand alone then.
ALTER TABLE hosts ADD COLUMN agent_dirs jsonb NOT NULL DEFAULT '[]'::jsonb;
