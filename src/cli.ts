import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig } from './config/load.js';
import { Store } from './store/store.js';

const USAGE = `Usage: parla <command>
  orgs list                               list organizations
  orgs create <name>                      create an organization and print its first key
  keys list [--org <orgId>]               list API keys (never the keys themselves)
  keys create [--org <orgId>] [--name n]  create a key (default: the first org) and print it once
  keys revoke <keyId>                     revoke a key
Uses the same configuration as the server (DATABASE_URL, PARLA_DATA_DIR, …).`;

async function run(argv: string[]): Promise<number> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      org: { type: 'string' },
      name: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  const [group, command, arg] = positionals;
  if (values.help === true || group === undefined) {
    console.log(USAGE);
    return group === undefined && values.help !== true ? 2 : 0;
  }
  const config = loadConfig();
  const store = await Store.open({
    dataDir: resolve(config.dataDir),
    ...(config.databaseUrl !== '' ? { databaseUrl: config.databaseUrl } : {}),
    secretKey: config.secretKey,
  });
  try {
    const keys = store.keys;
    if (group === 'orgs' && command === 'list') {
      console.table(await keys.listOrgs());
    } else if (group === 'orgs' && command === 'create' && arg !== undefined) {
      const orgId = await keys.createOrg(arg);
      const { key } = await keys.createKey(orgId, values.name ?? 'cli');
      console.log(`org ${orgId}\nkey ${key}`);
    } else if (group === 'keys' && command === 'list') {
      console.table(await keys.listKeys(values.org));
    } else if (group === 'keys' && command === 'create') {
      const orgs = await keys.listOrgs();
      const orgId = values.org ?? orgs[0]?.id;
      if (orgId === undefined || !orgs.some((o) => o.id === orgId)) {
        console.error(
          orgId === undefined
            ? 'no organization yet: start the server once, or run `orgs create`'
            : `no organization ${orgId}`,
        );
        return 1;
      }
      const { id, key } = await keys.createKey(orgId, values.name ?? 'cli');
      console.log(`key id ${id} for org ${orgId}\n${key}`);
    } else if (group === 'keys' && command === 'revoke' && arg !== undefined) {
      const revoked = await keys.revokeKey(arg);
      console.log(revoked ? `revoked ${arg}` : `no active key ${arg}`);
      return revoked ? 0 : 1;
    } else {
      console.error(USAGE);
      return 2;
    }
    return 0;
  } finally {
    await store.close();
  }
}

run(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  },
);
