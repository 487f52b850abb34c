# syntax=docker/dockerfile:1
# fleetback-server as a container: a build stage with the whole workspace, then a runtime stage
# holding only what `node dist/main.js` loads (docker-compose.yml runs two of these behind Caddy).
# The base is pinned to an exact Node release and Debian suite (the keeper's restic comes from
# bookworm), so a rebuild gets the same Node the tests ran, not whatever 20-slim points at then.
#   docker build -t fleetback-server .

# ---- build: install with the lockfile, build the server and what it depends on ----
FROM node:20.20.2-bookworm-slim AS build
WORKDIR /src
ENV CI=true
# The manifests first, so the dependency download stays cached until the lockfile changes.
COPY pnpm-lock.yaml pnpm-workspace.yaml .npmrc ./
RUN npx --yes pnpm@10.34.8 fetch
COPY . .
RUN npx --yes pnpm@10.34.8 install --offline --frozen-lockfile
# The server and its workspace dependencies: db (migrations), web (views, static assets),
# installer (install.sh template), agent (the shipped bundle dist/bundle/fleetback-agent.mjs).
RUN npx --yes pnpm@10.34.8 exec turbo run build --filter=@fleetback/server... --output-logs=errors-only
# A self-contained copy of the server with production dependencies only; workspace packages enter
# it as their package.json "files" (dist plus migrations/, views/, static/, templates/).
RUN npx --yes pnpm@10.34.8 --filter @fleetback/server deploy --prod --legacy /out

# ---- keeper: the agent that maintains other hosts' repositories (docker-compose.yml `keeper`) ----
# restic from Debian (0.14 on bookworm) and the agent bundle; no server. Built with
# `--target keeper`; the default target stays the server below.
FROM node:20.20.2-bookworm-slim AS keeper
RUN apt-get update \
 && apt-get install -y --no-install-recommends restic ca-certificates \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /src/packages/agent/dist/bundle/fleetback-agent.mjs /opt/fleetback-agent/fleetback-agent.mjs
COPY deploy/keeper-entrypoint.sh /usr/local/bin/fleetback-keeper
# The keeper reads no host's files: it runs unprivileged, with its own config and state dirs.
RUN mkdir -p /etc/fleetback-agent /var/lib/fleetback-agent \
 && chown node:node /etc/fleetback-agent /var/lib/fleetback-agent \
 && chmod 0700 /etc/fleetback-agent /var/lib/fleetback-agent
ENV FLEETBACK_AGENT_CONFIG_DIR=/etc/fleetback-agent \
    FLEETBACK_AGENT_STATE_DIR=/var/lib/fleetback-agent \
    FLEETBACK_AGENT_INSTALL_DIR=/opt/fleetback-agent
USER node
CMD ["fleetback-keeper"]

# ---- runtime: node and the deployed server, nothing else ----
FROM node:20.20.2-bookworm-slim AS runtime
ENV NODE_ENV=production \
    FLEETBACK_LISTEN=0.0.0.0:8080 \
    FLEETBACK_DATA_DIR=/var/lib/fleetback
WORKDIR /app
# Owned by root, so the server (user node) cannot change its own code.
COPY --from=build /out /app
# The data dir (key files, agent artefacts) belongs to the unprivileged user; a named volume
# mounted here starts with this owner and mode.
RUN mkdir -p /var/lib/fleetback && chown node:node /var/lib/fleetback && chmod 0700 /var/lib/fleetback
USER node
EXPOSE 8080
# /readyz: 200 once the database answers and every migration is applied. The slim base has no
# curl; Node's fetch does the request.
HEALTHCHECK --interval=15s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:8080/readyz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
STOPSIGNAL SIGTERM
# As `pnpm start` runs it. One V8 helper thread instead of four: every helper thread that compiles
# PGlite's WebAssembly or collects garbage keeps its own malloc arena, ~25 MiB of an idle server.
# Young-generation semi-spaces of 4 MiB instead of up to 16: a burst (a reconnect storm, a fleet's
# enrolment) grew them to 16 MiB each, and V8 kept those pages, mostly empty, for good.
CMD ["node", "--v8-pool-size=1", "--max-semi-space-size=4", "dist/main.js"]
