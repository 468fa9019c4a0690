# One image for the API and the projection worker (docker-compose.yml picks the command).
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci
COPY . .
RUN node scripts/build.mjs && npm prune --omit=dev

FROM node:24-bookworm-slim
ENV NODE_ENV=production
# Everything the service writes (portraits, and on the embedded default its cluster and generated
# keys) goes under DATA_DIR. The image runs as `node` (uid 1000, the node image's unprivileged
# user), so the directory is made here and given to it: a named volume mounted at /data starts as a
# copy of this directory, owner and mode included, where a path missing from the image would be
# created owned by root, and nothing could be written to it.
ENV DATA_DIR=/data
RUN mkdir -p /data && chown node:node /data && chmod 700 /data
WORKDIR /app
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
USER node
EXPOSE 3000
# The service's V8 flags (src/lifecycle/node-flags.ts says why).
CMD ["node", "--min-semi-space-size=16", "--max-semi-space-size=64", "dist/src/main.js"]
