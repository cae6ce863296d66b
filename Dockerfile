# Build stage: compile TypeScript and build native modules (@discordjs/opus builds from source).
FROM node:20-bookworm AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY config ./config
COPY src ./src
RUN npm run build && npm prune --omit=dev

# Runtime stage: only the compiled code, production dependencies and the defaults file.
FROM node:20-bookworm-slim
ENV NODE_ENV=production \
    PARLA_HOST=0.0.0.0 \
    PARLA_PORT=3000 \
    PARLA_DATA_DIR=/data
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/config ./config
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
# 3000: HTTP API. Reserved for the transports: 3001 websocket audio, 5060 SIP, 40000-40999/udp RTP.
EXPOSE 3000 3001 5060/udp 5060/tcp
HEALTHCHECK CMD node -e "fetch('http://127.0.0.1:'+(process.env.PARLA_PORT||3000)+'/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
CMD ["node", "dist/src/main.js"]
