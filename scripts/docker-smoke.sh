#!/usr/bin/env bash
# Runs the Dockerfile's build and start commands OUTSIDE Docker (Docker cannot run on the
# development machines): the build stage in one directory, the runtime stage (production
# dependencies only, dist/ copied over) in another, then the image's ENTRYPOINT + CMD, read
# from the Dockerfile, against the simulator, with the config and an env file as
# `docker run -v …:/config/config.yaml --env-file …` would give them. It checks that:
#   - the runtime has no dev dependencies and still starts (every runtime import is a dependency),
#   - the store's native addon (better-sqlite3) is built in the deps stage and loads,
#   - the store lands on the /data volume through the default ./data path,
#   - the HEALTHCHECK command passes against /healthz (when the status server is built),
#   - alerts flow, and SIGTERM stops the process with exit 0.
# Slow (two `npm ci`, a build, the SQLite addon compiled): `npm run test:docker`, not part of `npm test`.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dockerfile="$repo/Dockerfile"
work=$(mktemp -d "${TMPDIR:-/tmp}/kaiawatch-docker-smoke-XXXXXX")
pids=()
cleanup() {
  local pid i
  for pid in "${pids[@]}"; do
    kill -TERM "$pid" 2>/dev/null || continue
    for i in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    kill -KILL "$pid" 2>/dev/null || true
  done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

step() { printf '\n== %s\n' "$*"; }
fail() {
  printf '\ndocker-smoke: FAIL: %s\n' "$*" >&2
  for f in "$work"/*.out "$work"/*.err; do [ -s "$f" ] && { printf -- '--- %s (last 40 lines)\n' "$(basename "$f")" >&2; tail -n 40 "$f" >&2; }; done
  exit 1
}
# Waits up to $1 seconds for the command in the remaining arguments to succeed.
wait_until() {
  local deadline=$((SECONDS + $1)); shift
  until "$@"; do
    [ "$SECONDS" -lt "$deadline" ] || return 1
    sleep 0.5
  done
}
npm_quiet() { npm "$@" --no-audit --no-fund --loglevel=error; }

# The commands this script mirrors must be the Dockerfile's own: fail when one changes.
for line in \
  'COPY package.json package-lock.json ./' \
  'RUN npm ci --ignore-scripts' \
  'COPY tsconfig.json tsconfig.build.json ./' \
  'COPY scripts/build.mjs ./scripts/build.mjs' \
  'COPY src ./src' \
  'RUN npm run build' \
  'RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*' \
  'RUN npm ci --omit=dev --ignore-scripts && npm rebuild better-sqlite3 && npm cache clean --force' \
  'COPY --from=deps /app/node_modules ./node_modules' \
  'COPY --from=build /app/dist ./dist' \
  'COPY examples ./examples' \
  'COPY scripts/healthcheck.mjs ./scripts/healthcheck.mjs' \
  'RUN mkdir -p /data /config && chown node:node /data && ln -s /data /app/data'; do
  grep -qxF -- "$line" "$dockerfile" || fail "the Dockerfile no longer has: $line (update scripts/docker-smoke.sh with it)"
done
# ENTRYPOINT + CMD and the HEALTHCHECK command, exactly as written in the Dockerfile (exec form).
mapfile -t start_cmd < <(node -e '
  const text = require("fs").readFileSync(process.argv[1], "utf8");
  const last = (re) => { const all = [...text.matchAll(re)]; if (!all.length) throw new Error("missing " + re); return JSON.parse(all[all.length - 1][1]); };
  for (const arg of [...last(/^ENTRYPOINT (\[.*\])$/gm), ...last(/^CMD (\[.*\])$/gm)]) console.log(arg);
' "$dockerfile")
mapfile -t health_cmd < <(node -e '
  const m = /^HEALTHCHECK .*CMD (\[.*\])$/m.exec(require("fs").readFileSync(process.argv[1], "utf8"));
  if (!m) throw new Error("no HEALTHCHECK CMD [...]");
  for (const arg of JSON.parse(m[1])) console.log(arg);
' "$dockerfile")
health_url=$(sed -n 's/^ENV KAIAWATCH_HEALTHCHECK_URL=//p' "$dockerfile")
[ "${#start_cmd[@]}" -gt 0 ] && [ "${#health_cmd[@]}" -gt 0 ] && [ -n "$health_url" ] || fail "cannot read ENTRYPOINT/CMD/HEALTHCHECK from the Dockerfile"
printf 'start command: %s\nhealth check: %s\n' "${start_cmd[*]}" "${health_cmd[*]}"

step "build stage (in $work/build)"
mkdir -p "$work/build"
cp "$repo/package.json" "$repo/package-lock.json" "$work/build/"
(cd "$work/build" && npm_quiet ci --ignore-scripts)
cp "$repo/tsconfig.json" "$repo/tsconfig.build.json" "$work/build/"
mkdir -p "$work/build/scripts" && cp "$repo/scripts/build.mjs" "$work/build/scripts/"
cp -R "$repo/src" "$work/build/src"
(cd "$work/build" && npm_quiet run build)

step "deps stage (in $work/deps): production dependencies, the SQLite addon built"
# The stage installs python3, make and g++ with apt; here they must already be installed.
for tool in python3 make g++; do command -v "$tool" >/dev/null || fail "$tool is needed to build better-sqlite3 (the Dockerfile's deps stage installs it)"; done
mkdir -p "$work/deps"
cp "$repo/package.json" "$repo/package-lock.json" "$work/deps/"
# `npm cache clean --force` is left out: here it would empty this machine's npm cache.
(cd "$work/deps" && npm_quiet ci --omit=dev --ignore-scripts && npm_quiet rebuild better-sqlite3)

step "runtime stage (in $work/app): production dependencies, dist/"
mkdir -p "$work/app/scripts" "$work/volume" "$work/config"
cp "$repo/package.json" "$repo/package-lock.json" "$work/app/"
cp -R "$work/deps/node_modules" "$work/app/node_modules"
cp -R "$work/build/dist" "$work/app/dist"
cp "$repo/config.example.yaml" "$work/app/"
cp -R "$repo/examples" "$work/app/examples"
cp "$repo/scripts/healthcheck.mjs" "$work/app/scripts/healthcheck.mjs"
ln -s "$work/volume" "$work/app/data"
for dev in typescript vitest eslint tsx; do
  [ ! -e "$work/app/node_modules/$dev" ] || fail "dev dependency $dev is in the runtime stage"
done
(cd "$work/app" && node -e 'new (require("better-sqlite3"))(":memory:").close()') || fail "the SQLite addon does not load in the runtime stage"
printf 'runtime node_modules: %s packages\n' "$(find "$work/app/node_modules" -maxdepth 2 -name package.json | wc -l)"

step "simulator (the runtime's own \`kaiawatch simulate\`)"
(cd "$work/app" && exec node dist/cli/bin.js simulate --port 0 --api-key smoke-secret-key --initial-blocks 5) >"$work/simulate.out" 2>"$work/simulate.err" &
pids+=($!)
wait_until 20 grep -qs '^  busy wallet' "$work/simulate.out" || fail "the simulator did not start"
sim_url=$(sed -n 's/^  explorer API  \(http[^ ]*\).*/\1/p' "$work/simulate.out")
wallet=$(sed -n 's/^  busy wallet *\(0x[0-9a-fA-F]*\).*/\1/p' "$work/simulate.out")
status_port=$(node -e 'const s = require("net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); })')
echo "simulator $sim_url, status port $status_port"

# What `docker run -v ./config.yaml:/config/config.yaml:ro --env-file kaiawatch.env` provides.
cat >"$work/config/config.yaml" <<YAML
explorer:
  base_url: $sim_url
  api_key: \${KAIASCAN_API_KEY}
chain:
  network: smoke
  rpc_url: $sim_url
  explorer_url: $sim_url
  lag_blocks: 0
status:
  listen: 127.0.0.1:$status_port
log:
  level: info
  format: json
defaults:
  schedule: "* * * * * *"
  jitter: 0s
watches:
  - name: wallet
    account: "$wallet"
    sources: [internal_transactions]
rules:
  - name: every-call
    watch: wallet
    notify: [out, file]
sinks:
  out: { type: console }
  file: { type: file, path: ./data/alerts.jsonl }
YAML
printf 'KAIASCAN_API_KEY=smoke-secret-key\n' >"$work/kaiawatch.env"
run_cmd=()
for arg in "${start_cmd[@]}"; do run_cmd+=("${arg//\/config\/config.yaml/$work/config/config.yaml}"); done

step "start: ${run_cmd[*]}"
(cd "$work/app" && set -a && . "$work/kaiawatch.env" && set +a && NODE_ENV=production exec "${run_cmd[@]}") >"$work/run.out" 2>"$work/run.err" &
run_pid=$!
pids+=("$run_pid")

has_alerts() { [ -s "$work/volume/alerts.jsonl" ] && [ -s "$work/volume/kaiawatch.json" ]; }
wait_until 40 has_alerts || fail "no alert reached ./data/alerts.jsonl on the volume"
kill -0 "$run_pid" 2>/dev/null || fail "kaiawatch run exited early"
echo "store and alerts on the volume: $(ls "$work/volume" | tr '\n' ' ')"
grep -q 'smoke-secret-key' "$work/run.out" "$work/run.err" && fail "the API key appeared in the output"

if compgen -G "$work/app/dist/status/*.js" >/dev/null; then
  step "HEALTHCHECK: ${health_cmd[*]}"
  healthy() { (cd "$work/app" && KAIAWATCH_HEALTHCHECK_URL="${health_url/9464/$status_port}" "${health_cmd[@]}"); }
  wait_until 30 healthy || fail "the health check did not pass"
  echo "healthy"
  # The check must be able to fail: against a port nothing listens on, it does.
  free_port=$(node -e 'const s = require("net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); })')
  if (cd "$work/app" && KAIAWATCH_HEALTHCHECK_URL="http://127.0.0.1:$free_port/healthz" "${health_cmd[@]}" 2>/dev/null); then fail "the health check passed with nothing listening"; fi
else
  step "HEALTHCHECK: skipped (no status server in dist/status yet)"
fi

step "docker stop: SIGTERM"
kill -TERM "$run_pid"
deadline=$((SECONDS + 20))
while kill -0 "$run_pid" 2>/dev/null; do
  [ "$SECONDS" -lt "$deadline" ] || fail "kaiawatch did not stop within 20 s of SIGTERM"
  sleep 0.2
done
set +e
wait "$run_pid"
code=$?
set -e
[ "$code" -eq 0 ] || fail "kaiawatch exited $code after SIGTERM (expected 0)"
echo "stopped, exit 0"

step "docker run … demo: the demo from production dependencies only"
(cd "$work/app" && NODE_ENV=production exec node dist/cli/bin.js demo) >"$work/demo.out" 2>"$work/demo.err" &
demo_pid=$!
pids+=("$demo_pid")
demo_ready() { grep -q '^\[email\] ' "$work/demo.out" && grep -q '^\[webhook\] ' "$work/demo.out"; }
wait_until 30 demo_ready || fail "the demo showed no webhook and mail"
kill -INT "$demo_pid"
set +e
wait "$demo_pid"
code=$?
set -e
[ "$code" -eq 0 ] || fail "the demo exited $code after SIGINT (expected 0)"
tail -n 1 "$work/demo.out"

printf '\ndocker-smoke: OK (%s alerts delivered)\n' "$(wc -l <"$work/volume/alerts.jsonl")"
