# syntax=docker/dockerfile:1
# The service's image: one image for both roles (SERVICE_ROLE=api|worker|all).
# Build:  docker build -t loyalty-service .
# Run:    see deploy/compose.yaml (PostgreSQL, Redis, one API and one worker).

# --- build: every dependency, the compiled service (dist/) and the console's static files (dist/console)
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
COPY packages/sdk/package.json packages/sdk/
COPY packages/runtime/package.json packages/runtime/
COPY packages/console/package.json packages/console/
RUN npm ci --no-audit --no-fund
COPY tsconfig.json ./
COPY scripts ./scripts
COPY src ./src
COPY migrations ./migrations
COPY packages ./packages
RUN npm run build

# --- runtime: production dependencies only, a non-root user, a health check (/healthz of the API, or of a
#     worker's METRICS_PORT: a worker without it reports unhealthy)
FROM node:20-bookworm-slim AS runtime
ENV NODE_ENV=production \
    APP_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000 \
    DATA_DIR=/var/lib/loyalty
WORKDIR /app
COPY package.json package-lock.json ./
COPY packages/sdk/package.json packages/sdk/
COPY packages/runtime/package.json packages/runtime/
COPY packages/console/package.json packages/console/
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
COPY --from=build /app/migrations ./migrations
# The embed runtime is bundled from its sources at first request (src/modules/runtime/bundle.ts); the SDK is its dependency.
COPY --from=build /app/packages/runtime ./packages/runtime
COPY --from=build /app/packages/sdk ./packages/sdk
COPY LICENSE ./
RUN mkdir -p /var/lib/loyalty && chown node:node /var/lib/loyalty
USER node
EXPOSE 3000
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD node -e "const port = process.env.SERVICE_ROLE === 'worker' ? process.env.METRICS_PORT : process.env.PORT || 3000; fetch('http://127.0.0.1:' + port + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"
COPY scripts/start.sh ./scripts/
CMD ["sh", "scripts/start.sh", "--enable-source-maps"]
