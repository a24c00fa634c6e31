import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from '../config/config';
import { durationSeconds } from '../config/duration';
import { isReservedSub } from './identity';
import { JwtService } from './jwt.service';

const USAGE = `Usage: npm run token -- --sub <id> [--admin | --operator [--name <shown name>]] [--email <email>] [--agent-id <id> ...] [--expires-in 1h]

Prints a chat JWT signed with the configured JWT_SECRET (JWT_ISSUER / JWT_AUDIENCE applied).
--admin prints an admin token instead (roles ["ADMIN"]), signed with ADMIN_JWT_SECRET: the way to
get the first token for the ADMIN REST routes; it also opens admin chat sessions.
--operator prints an operator token (roles ["OPERATOR"], signed with ADMIN_JWT_SECRET) for the
bots given with --agent-id: it opens the operator console for those bots (docs/handoff.md).`;

function main(): void {
  const { values } = parseArgs({
    options: {
      sub: { type: 'string' },
      admin: { type: 'boolean', default: false },
      operator: { type: 'boolean', default: false },
      name: { type: 'string' },
      email: { type: 'string' },
      'agent-id': { type: 'string', multiple: true },
      'expires-in': { type: 'string', default: '1h' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) return void process.stdout.write(`${USAGE}\n`);
  if (!values.sub) fail('--sub is required');
  if (isReservedSub(values.sub) && !values.admin) fail('a sub that reads as "admin" is reserved for ADMIN tokens');
  if ((values.admin || values.operator) && !process.env.ADMIN_JWT_SECRET) {
    fail('ADMIN_JWT_SECRET is not set: admin and operator tokens must be signed with the secret the hub verifies them with');
  }
  if (values.operator && (values.admin || !values['agent-id']?.length)) fail('--operator needs at least one --agent-id and no --admin');
  if (!process.env.JWT_SECRET) fail('JWT_SECRET is not set: the token must be signed with the secret the hub verifies with');
  let seconds: number;
  try {
    seconds = durationSeconds(values['expires-in']);
  } catch {
    return fail('--expires-in must look like 15m, 1h or 7d');
  }
  let config;
  try {
    config = loadConfig().config;
  } catch (err) {
    return fail(err instanceof ConfigError ? err.message : String(err));
  }
  const jwt = new JwtService(config);
  const claims = { sub: values.sub, email: values.email, agentIds: values['agent-id'] };
  const { token } = values.operator
    ? jwt.signOperator({ sub: values.sub, name: values.name, agentIds: values['agent-id'] ?? [] }, seconds)
    : values.admin
      ? jwt.signAdmin(claims, seconds)
      : jwt.sign(claims, seconds);
  process.stdout.write(`${token}\n`);
}

function fail(message: string): never {
  process.stderr.write(`token: ${message}\n\n${USAGE}\n`);
  process.exit(2);
}

main();
