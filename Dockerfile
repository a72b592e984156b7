# syntax=docker/dockerfile:1
# Build stage: compile TypeScript with the full dependency set.
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY scripts/build.sh scripts/copy-assets.mjs ./scripts/
COPY src ./src
RUN npm run build

# Runtime stage: production dependencies only, non-root.
FROM node:20-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
COPY bin ./bin
COPY handlers ./handlers
COPY fixtures ./fixtures
# The spool volume's mount point, owned by the user the service runs as (a new named volume copies it).
RUN mkdir -p /spool && chown node:node /spool
USER node
EXPOSE 3000
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/healthz').then(r=>process.exit(r.ok?0:1)).catch(()=>process.exit(1))"
ENTRYPOINT ["node", "bin/switchyard.js"]
CMD ["start"]
