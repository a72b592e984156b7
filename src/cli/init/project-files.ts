import { readFileSync } from 'node:fs';

/** This package's manifest (two levels above dist/cli/init/ and src/cli/init/ is the package root). */
interface OwnManifest {
  version: string;
  dependencies: Record<string, string>;
  devDependencies?: Record<string, string>;
}

const own = (): OwnManifest => JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as OwnManifest;

/**
 * Where the project's `switchyard` comes from: a tarball kept in the project
 * (`vendor/…`, so `npm ci` works in its Docker build too), or a spec npm
 * fetches (a git URL, a version range).
 */
export type SwitchyardSource = { readonly vendored: string } | { readonly spec: string };

/** The package's own delivery the example is replayed with (its ids are the sandbox seed's; it asks about an order). */
const fixture = () => readFileSync(new URL('../../../fixtures/message.received.json', import.meta.url), 'utf8');

/**
 * The files of a new project, path → content. The version ranges are the ones
 * this package is built and tested with, so a new project gets a matching set;
 * `source` is where its switchyard comes from.
 */
export function projectFiles(name: string, source: SwitchyardSource): Record<string, string> {
  const pkg = own();
  const dev = pkg.devDependencies ?? {};
  const manifest = {
    name,
    version: '0.1.0',
    private: true,
    type: 'module',
    scripts: {
      dev: 'switchyard dev',
      test: 'vitest run',
      start: 'switchyard start',
      typecheck: 'tsc --noEmit',
    },
    dependencies: {
      switchyard: 'vendored' in source ? `file:vendor/${source.vendored}` : source.spec,
      zod: pkg.dependencies['zod'] ?? '^4.0.0',
    },
    devDependencies: {
      '@types/node': dev['@types/node'] ?? '^20.0.0',
      typescript: dev['typescript'] ?? '^5.0.0',
      vitest: dev['vitest'] ?? '^4.0.0',
    },
  };
  return {
    'package.json': `${JSON.stringify(manifest, null, 2)}\n`,
    'tsconfig.json': TSCONFIG,
    '.gitignore': GITIGNORE,
    'handlers/order-question.ts': HANDLER,
    'handlers/order-question.test.ts': HANDLER_TEST,
    'fixtures/message.received.json': fixture(),
    Dockerfile: dockerfile('vendored' in source),
    'docker-compose.yml': COMPOSE,
    '.dockerignore': 'node_modules\n.switchyard\ncaptures\n.env\n',
    'README.md': readme(name),
  };
}

const TSCONFIG = `{
  "compilerOptions": {
    "target": "ES2022",
    "module": "NodeNext",
    "moduleResolution": "NodeNext",
    "strict": true,
    "noUncheckedIndexedAccess": true,
    "verbatimModuleSyntax": true,
    "skipLibCheck": true,
    "types": ["node"],
    "noEmit": true
  },
  "include": ["handlers"]
}
`;

const GITIGNORE = `node_modules/
.switchyard/
captures/
.env
`;

const HANDLER = `/**
 * order-question — when a customer's inbound message asks about an order, leave
 * an internal note on the conversation so a teammate picks it up.
 * Calls: 1 write (the note), keyed so a retried or repeated delivery never adds a second one.
 */
import { z } from 'zod';
import { defineHandler } from 'switchyard';

export default defineHandler({
  id: 'order-question',
  on: ['message.received'],
  abilities: ['conversations:write'],
  settings: z.object({
    ORDER_NOTE: z.string().trim().min(1).default('Customer is asking about an order.').describe('text of the internal note'),
  }),
  async handle(event, ctx) {
    const message = event.data;
    if (message.type !== 'message' || message.direction !== 'inbound') return;
    if (!/\\border\\b/i.test(message.body ?? '')) return;
    await ctx.step('note', () => ctx.api.notes.create(message.conversation_id, { body: ctx.settings.ORDER_NOTE }));
    ctx.log.info({ conversation: message.conversation_id }, 'order question noted');
  },
});
`;

const HANDLER_TEST = `import { describe, expect, it } from 'vitest';
import { createEvent, testHandler } from 'switchyard/testing';
import handler from './order-question.js';

describe('order-question', () => {
  it('notes an inbound message that asks about an order', async () => {
    const event = createEvent('message.received', { data: { body: 'Where is my order?' } });
    const result = await testHandler(handler, event);
    expect(result.outcome).toBe('completed');
    expect(result.calls.map((c) => \`\${c.method} \${c.path}\`)).toEqual([\`POST /conversations/\${event.data.conversation_id}/notes\`]);
    expect(result.calls[0]?.body).toEqual({ body: 'Customer is asking about an order.' });
  });

  it('leaves other messages alone', async () => {
    const result = await testHandler(handler, createEvent('message.received', { data: { body: 'Thanks, bye!' } }));
    expect(result.outcome).toBe('completed');
    expect(result.calls).toEqual([]);
  });
});
`;

/** The project's image: its handlers on Switchyard (receiver and worker in one process), non-root. */
const dockerfile = (vendored: boolean) => `# Your handlers on Switchyard: \`docker compose up --build\` runs it with Redis beside it.
FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
${vendored ? 'COPY vendor ./vendor\n' : ''}RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY handlers ./handlers
# The spool volume's mount point, owned by the user the service runs as.
RUN mkdir -p /spool && chown node:node /spool
USER node
EXPOSE 3000
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s --retries=3 \\
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/healthz').then(r=>process.exit(r.ok?0:1)).catch(()=>process.exit(1))"
# Receiver and worker in one process; scale out with \`switchyard serve\` and \`switchyard work\`.
CMD ["node", "node_modules/switchyard/bin/switchyard.js", "start"]
`;

const COMPOSE = `# Switchyard with your handlers and a Redis. Put the configuration in .env (never commit it):
#   WEBHOOK_SECRETS=...        the workspace's webhook signing secret
#   WORKSPACE_API_URL=...      e.g. https://<workspace>/api/v1
#   WORKSPACE_API_TOKEN=...
#   and your handlers' settings (e.g. ORDER_NOTE=...)
services:
  redis:
    image: redis:7
    command: ["redis-server", "--appendonly", "yes", "--appendfsync", "everysec"]
    volumes: ["redis-data:/data"]
    healthcheck:
      test: ["CMD", "redis-cli", "ping"]
      interval: 5s
      timeout: 3s
      retries: 10
  switchyard:
    build: .
    depends_on:
      redis:
        condition: service_healthy
    ports: ["3000:3000"]
    env_file: .env
    environment:
      REDIS_URL: redis://redis:6379
      SPOOL_DIR: /spool
    volumes: ["spool:/spool"]
volumes:
  redis-data:
  spool:
`;

const readme = (name: string) => `# ${name}

\`\`\`sh
npm run dev    # start: your handlers against a local sandbox of the workspace API, reloaded when you save
npm test       # test: your handlers' tests (vitest, with switchyard/testing)
\`\`\`

Handlers live in \`handlers/\`: one module per handler, its default export made with
\`defineHandler\`. \`handlers/order-question.ts\` is an example; its test beside it runs the
handler exactly as the worker does, against an in-process sandbox.

- \`npm run dev\` needs \`redis-server\` installed (Debian/Ubuntu: \`apt-get install redis-server\`; it runs
  its own under \`.switchyard/\`) or \`REDIS_URL\` set. It starts a sandbox workspace (a stateful stand-in for the API, on
  http://127.0.0.1:4010/api/v1) whose signed events go to your receiver on
  http://127.0.0.1:3000/webhooks, with a managed local Redis. Send an event with
  \`npx switchyard send message.received\` in a second terminal, or replay the delivery in \`fixtures/\`
  through your handlers in that terminal, against the same sandbox (\`--dry-run\` prints the writes instead of sending them):

  \`\`\`sh
  export WORKSPACE_API_URL=http://127.0.0.1:4010/api/v1 WORKSPACE_API_TOKEN=sbx_full_acme
  npx switchyard replay fixtures/ --inline --dry-run
  \`\`\`
- \`npm run typecheck\` type-checks the handlers.
- In production: \`docker compose up --build\` with the configuration in \`.env\` (see docker-compose.yml), or
  \`npm start\` with \`REDIS_URL\`, \`WEBHOOK_SECRETS\`, \`WORKSPACE_API_URL\` and \`WORKSPACE_API_TOKEN\` set.
`;
