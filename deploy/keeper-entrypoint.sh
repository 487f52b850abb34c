#!/bin/sh
# The keeper container's start (Dockerfile stage `keeper`): enrol once with the enrolment token
# minted for it, then run the agent. The config dir is a volume, so a restart skips enrolment.
set -eu
agent=/opt/fleetback-agent/fleetback-agent.mjs
if [ ! -f "$FLEETBACK_AGENT_CONFIG_DIR/agent.json" ]; then
	if [ -z "${FLEETBACK_KEEPER_TOKEN:-}" ]; then
		echo "fleetback-keeper: not enrolled yet; set FLEETBACK_KEEPER_TOKEN to an enrolment token from the enrol page" >&2
		exit 78
	fi
	node "$agent" enroll --server "$FLEETBACK_SERVER" --token "$FLEETBACK_KEEPER_TOKEN"
fi
exec node "$agent" run
