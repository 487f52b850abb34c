# syntax=docker/dockerfile:1
# fleetback-server as a container: a build stage with the whole workspace, then a runtime stage
# holding only what `node dist/main.js` loads (docker-compose.yml runs two of these behind Caddy).
#   docker build -t fleetback-server .

# ---- build: install with the lockfile, build the server and what it depends on ----
FROM node:20-slim AS build
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

# ---- runtime: node and the deployed server, nothing else ----
FROM node:20-slim AS runtime
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
# /readyz: 200 once the database answers and every migration is applied. node:20-slim has no
# curl; Node's fetch does the request.
HEALTHCHECK --interval=15s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:8080/readyz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
STOPSIGNAL SIGTERM
# As `pnpm start` runs it. One V8 helper thread instead of four: every helper thread that compiles
# PGlite's WebAssembly or collects garbage keeps its own malloc arena, ~25 MiB of an idle server.
# Young-generation semi-spaces of 4 MiB instead of up to 16: a burst (a reconnect storm, a fleet's
# enrolment) grew them to 16 MiB each, and V8 kept those pages, mostly empty, for good.
CMD ["node", "--v8-pool-size=1", "--max-semi-space-size=4", "dist/main.js"]
