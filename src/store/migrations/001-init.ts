/**
 * The first schema. Migrations are append-only: never edit one that has shipped, add the next.
 * Each resource is a JSONB document with real columns for identity, tenancy, timestamps and the
 * fields its list endpoint filters on, each filter served by an index led by org_id.
 */
function resourceTable(table: string, columns: Record<string, string> = {}): string {
  const extra = Object.entries(columns)
    .map(([name, type]) => `,\n  ${name} ${type}`)
    .join('');
  const indexes = Object.keys(columns)
    .map((name) => `create index ${table}_org_${name} on ${table} (org_id, ${name});`)
    .join('\n');
  return `
create table ${table} (
  id text primary key,
  org_id text not null references orgs (id) on delete cascade,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  doc jsonb not null${extra}
);
create index ${table}_org_created on ${table} (org_id, created_at desc);
create index ${table}_org_updated on ${table} (org_id, updated_at desc);
${indexes}`;
}

export const sql = `
create table orgs (
  id text primary key,
  name text not null,
  doc jsonb not null default '{}',
  created_at timestamptz not null,
  updated_at timestamptz not null
);

create table api_keys (
  id text primary key,
  org_id text not null references orgs (id) on delete cascade,
  key_hash text not null unique,
  name text,
  created_at timestamptz not null,
  revoked_at timestamptz
);
create index api_keys_org on api_keys (org_id);

${resourceTable('assistants')}
${resourceTable('calls', { assistant_id: 'text', phone_number_id: 'text', status: 'text' })}
${resourceTable('phone_numbers', { number: 'text', credential_id: 'text' })}
create unique index phone_numbers_org_number_unique on phone_numbers (org_id, number);
${resourceTable('credentials', { provider: 'text' })}
${resourceTable('tools', { type: 'text' })}
${resourceTable('knowledge_bases', { provider: 'text' })}
${resourceTable('files', { purpose: 'text' })}
${resourceTable('workflows')}
${resourceTable('squads')}
${resourceTable('campaigns', { status: 'text' })}
${resourceTable('chats', { assistant_id: 'text', squad_id: 'text', session_id: 'text', previous_chat_id: 'text' })}
${resourceTable('sessions', { assistant_id: 'text', squad_id: 'text', name: 'text', phone_number_id: 'text' })}

create table logs (
  id text primary key,
  org_id text not null references orgs (id) on delete cascade,
  time timestamptz not null,
  type text not null,
  webhook_type text,
  assistant_id text,
  phone_number_id text,
  customer_id text,
  squad_id text,
  call_id text,
  doc jsonb not null
);
create index logs_org_time on logs (org_id, time desc);
create index logs_org_type_time on logs (org_id, type, time desc);
create index logs_org_call on logs (org_id, call_id);
create index logs_org_assistant on logs (org_id, assistant_id);
create index logs_org_phone_number on logs (org_id, phone_number_id);
`;
