# syntax=docker/dockerfile:1
# wedgewatch container image: docker build -t wedgewatch:0.1.0 .
# Node's major matches package.json "engines" (test/ops/dockerfile.test.ts checks it, and the rest below).

# 1. Compile TypeScript and bundle the CLI (dist/cli.js and its chunks, scripts/bundle.mjs) with every dependency.
FROM node:20-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json ./
COPY scripts ./scripts
COPY src ./src
# The build's tsc --incremental state (dist/.tsbuildinfo) is for rebuilds in a checkout, not for the image.
RUN npm run build && rm dist/.tsbuildinfo

# 2. Production dependencies only (no TypeScript, test or lint tooling in the image). The bundle needs none of
#    them to `run`; pino-pretty (--log.format pretty) and bcryptjs (the web auth worker) load from node_modules.
FROM node:20-bookworm-slim AS deps
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

# 3. The image: the compiled daemon and its production dependencies, run as the unprivileged `node` user
#    (uid 1000, the runAsUser of deploy/kubernetes/).
FROM node:20-bookworm-slim
ENV NODE_ENV=production
WORKDIR /opt/wedgewatch
COPY --from=deps /src/node_modules ./node_modules
COPY --from=build /src/dist ./dist
COPY package.json README.md ./
USER node
EXPOSE 9787
# Small young generation (1 MB semi-spaces) and old-space growth of 30% past the live heap: V8's defaults left
# 50-target RSS at ~220 MB with ~45 MB live. WebAssembly (undici's HTTP parser) stays on V8's baseline compiler:
# its optimizing tier-up cost a ~30 MB RSS spike and ~10 MB kept (bench:steady; docs/decisions.md).
ENTRYPOINT ["node", "--max-semi-space-size=1", "--heap-growing-percent=30", "--liftoff-only", "--no-flush-bytecode", "/opt/wedgewatch/dist/cli.js"]
CMD ["run", "--config", "/etc/wedgewatch/wedgewatch.yaml"]
