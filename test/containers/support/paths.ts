import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';

export const ROOT = join(__dirname, '..', '..', '..');
export const COMPOSE_FILE = 'docker-compose.yml';

type Compose = { services: Record<string, { image?: string; build?: unknown }> };
const compose = parse(readFileSync(join(ROOT, COMPOSE_FILE), 'utf8'), { merge: true }) as Compose;

/** The tag docker-compose.yml runs the hubs from; the tier builds deploy/Dockerfile under it. */
export const HUB_IMAGE: string = (() => {
  const images = new Set(
    Object.values(compose.services)
      .filter((s) => s.build)
      .map((s) => s.image),
  );
  if (images.size !== 1 || [...images][0] === undefined) throw new Error(`expected one image for the built services of ${COMPOSE_FILE}`);
  return [...images][0]!;
})();

/** The Redis image docker-compose.yml runs (a local stand-in here, the official image elsewhere). */
export const REDIS_IMAGE: string = compose.services.redis.image!;

/**
 * The token CLI inside the image, as `npm run token` runs it (package.json), so the tier follows the
 * script if the file moves: `node dist/auth/token.cli.js` → ['node', 'dist/auth/token.cli.js'].
 */
export const TOKEN_CLI: string[] = (() => {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  const words = pkg.scripts.token.trim().split(/\s+/);
  if (words[0] !== 'node') throw new Error(`npm run token is not a plain node command: ${pkg.scripts.token}`);
  return words;
})();
