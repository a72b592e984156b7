import { readFileSync } from 'node:fs';

/** This package's manifest (two levels above dist/cli/init/ and src/cli/init/ is the package root). */
interface OwnManifest {
  version: string;
  dependencies: Record<string, string>;
  devDependencies?: Record<string, string>;
}

const own = (): OwnManifest => JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as OwnManifest;

/** The package's own delivery the example is replayed with (its ids are the sandbox seed's; it asks about an order). */
const fixture = () => readFileSync(new URL('../../../fixtures/message.received.json', import.meta.url), 'utf8');

/**
 * The files of a new project, path → content. The version ranges are the ones
 * this package is built and tested with, so a new project gets a matching set;
 * `switchyardSpec` is where its switchyard comes from (default: this version's range).
 */
export function projectFiles(name: string, switchyardSpec?: string): Record<string, string> {
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
    dependencies: { switchyard: switchyardSpec ?? `^${pkg.version}`, zod: pkg.dependencies['zod'] ?? '^4.0.0' },
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
    Dockerfile: DOCKERFILE,
    'docker-compose.yml': COMPOSE,
    '.dockerignore': 'node_modules\n.switchyard\ncaptures\n',
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
  abilities: ['messages:send'],
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

const DOCKERFILE = `# Your handlers on Switchyard: \`docker compose up\` runs it with Redis beside it.
FROM node:20-slim
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json* ./
RUN npm ci --omit=dev --no-audit --no-fund || npm install --omit=dev --no-audit --no-fund
COPY handlers ./handlers
USER node
EXPOSE 3000
# Receiver and worker in one process; scale out with \`switchyard serve\` and \`switchyard work\`.
CMD ["npx", "--no-install", "switchyard", "start"]
`;

const COMPOSE = `# Switchyard with your handlers and a Redis. Set the secrets in .env (never commit it):
#   WEBHOOK_SECRETS=...        the workspace's webhook signing secret
#   WORKSPACE_API_URL=...      e.g. https://<workspace>/api/v1
#   WORKSPACE_API_TOKEN=...
services:
  redis:
    image: redis:7
    command: ["redis-server", "--appendonly", "yes", "--appendfsync", "everysec"]
    volumes: ["redis-data:/data"]
  switchyard:
    build: .
    depends_on: [redis]
    ports: ["3000:3000"]
    environment:
      REDIS_URL: redis://redis:6379
      WEBHOOK_SECRETS: \${WEBHOOK_SECRETS:?set WEBHOOK_SECRETS in .env}
      WORKSPACE_API_URL: \${WORKSPACE_API_URL:?set WORKSPACE_API_URL in .env}
      WORKSPACE_API_TOKEN: \${WORKSPACE_API_TOKEN:?set WORKSPACE_API_TOKEN in .env}
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

- \`npm run dev\` starts a sandbox workspace (a stateful stand-in for the API, on
  http://127.0.0.1:4010/api/v1) whose signed events go to your receiver on
  http://127.0.0.1:3000/webhooks, with a managed local Redis. Send an event with
  \`npx switchyard send message.received\`, or replay the captured one in \`fixtures/\` through your
  handlers with \`npx switchyard replay fixtures/ --inline\` (\`--dry-run\` prints the writes instead of sending them).
- \`npm run typecheck\` type-checks the handlers.
- In production: \`docker compose up --build\` (see docker-compose.yml for the variables), or
  \`npm start\` with \`REDIS_URL\`, \`WEBHOOK_SECRETS\`, \`WORKSPACE_API_URL\` and \`WORKSPACE_API_TOKEN\` set.
`;
