# kaiawatch: a monitoring and alerting daemon for the Kaia blockchain.
#
#   docker build -t kaiawatch .
#   docker run -d --name kaiawatch --init \
#     -v "$PWD/config.yaml:/config/config.yaml:ro" --env-file kaiawatch.env \
#     -v kaiawatch-data:/data -p 127.0.0.1:9464:9464 kaiawatch
#
# scripts/docker-smoke.sh (npm run test:docker) runs this file's build and start commands
# outside Docker; keep the two in step.

ARG NODE_IMAGE=node:20-slim

# ---- build: every dependency, compile TypeScript to dist/ ----
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
# --ignore-scripts: `prepare` would build before the sources are copied.
RUN npm ci --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY scripts/build.mjs ./scripts/build.mjs
COPY src ./src
RUN npm run build

# ---- deps: production dependencies, with the store's native SQLite addon built ----
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
# better-sqlite3 downloads a prebuilt addon when it can reach GitHub, and compiles it with
# node-gyp when it cannot: that needs python3, make and g++ (in this stage only).
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
# --ignore-scripts, then only better-sqlite3's install script: `prepare` would build without sources.
RUN npm ci --omit=dev --ignore-scripts && npm rebuild better-sqlite3 && npm cache clean --force

# ---- runtime: production dependencies and dist/ only ----
FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
# Built on the same base image, so the addon matches this Node and this C library.
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY config.example.yaml ./
COPY examples ./examples
COPY scripts/healthcheck.mjs ./scripts/healthcheck.mjs
# The default store path ./data/kaiawatch.json (an SQLite database, with its -wal and -shm
# files beside it, and a file sink's ./data/…) lands on the /data volume. /data belongs to the unprivileged user that runs kaiawatch.
RUN mkdir -p /data /config && chown node:node /data && ln -s /data /app/data
USER node
VOLUME ["/data"]
# The status server (/healthz, /readyz, /metrics, /status) when the config sets
# status.listen to 0.0.0.0:9464; the health check below asks it from inside.
EXPOSE 9464
ENV KAIAWATCH_HEALTHCHECK_URL=http://127.0.0.1:9464/healthz
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 CMD ["node", "scripts/healthcheck.mjs"]
# node is PID 1 and handles SIGTERM itself (kaiawatch registers handlers and stops within
# 15 s); `docker run --init` adds a reaper, which does no harm. Give `docker stop -t 20`.
STOPSIGNAL SIGTERM
# --optimize-for-size: V8 keeps its heap close to what is alive instead of letting it grow
# several times over between full collections. kaiawatch waits on the explorer's rate limit,
# not on its CPU: at 10,000 sources it holds ~160 MB instead of 210-320 MB (bench/results/scale.md).
ENTRYPOINT ["node", "--optimize-for-size", "dist/cli/bin.js"]
CMD ["run", "--config", "/config/config.yaml"]
