import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from '../config/config';
import { durationSeconds } from './duration';
import { JwtService } from './jwt.service';

const USAGE = `Usage: npm run token -- --sub <id> [--admin] [--email <email>] [--agent-id <id> ...] [--expires-in 1h]

Prints a client JWT signed with the configured JWT_SECRET (JWT_ISSUER / JWT_AUDIENCE applied).
--admin adds roles ["ADMIN"]: the way to get the first token for the ADMIN REST routes.`;

function main(): void {
  const { values } = parseArgs({
    options: {
      sub: { type: 'string' },
      admin: { type: 'boolean', default: false },
      email: { type: 'string' },
      'agent-id': { type: 'string', multiple: true },
      'expires-in': { type: 'string', default: '1h' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) return void process.stdout.write(`${USAGE}\n`);
  if (!values.sub) fail('--sub is required');
  if (values.sub === 'admin' && !values.admin) fail('sub "admin" is reserved for ADMIN tokens');
  if (!process.env.JWT_SECRET) fail('JWT_SECRET is not set: the token must be signed with the secret the hub verifies with');
  let seconds: number;
  try {
    seconds = durationSeconds(values['expires-in']!);
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
  const { token } = jwt.sign(
    {
      sub: values.sub!,
      email: values.email,
      roles: values.admin ? ['ADMIN'] : undefined,
      agentIds: values['agent-id'],
    },
    seconds,
  );
  process.stdout.write(`${token}\n`);
}

function fail(message: string): never {
  process.stderr.write(`token: ${message}\n\n${USAGE}\n`);
  process.exit(2);
}

main();
