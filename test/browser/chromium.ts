import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { chromium, type Browser } from 'playwright-core';

// Debian's /usr/bin/chromium is a shell wrapper; Playwright drives the binary behind it.
const CANDIDATES = ['/usr/lib/chromium/chromium', '/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'];

/** The Chromium the browser tests run: CHROMIUM_PATH, or the system package. */
export function chromiumPath(): string {
  const path = process.env.CHROMIUM_PATH ?? CANDIDATES.find((candidate) => existsSync(candidate));
  if (!path) throw new Error(`no Chromium found: install the chromium package or set CHROMIUM_PATH (looked at ${CANDIDATES.join(', ')})`);
  return path;
}

/** Headless Chromium; `--no-sandbox` because CI containers run as root. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: chromiumPath(),
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

/**
 * One Chromium for the calling test file (or describe block): launched before its first test, closed
 * after its last. Returns a getter, since the browser exists only once `beforeAll` has run.
 */
export function chromiumForFile(): () => Browser {
  let browser: Browser | undefined;
  beforeAll(async () => {
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
  });
  return () => {
    if (!browser) throw new Error('Chromium is not launched yet: use the browser in tests and hooks, not while collecting them');
    return browser;
  };
}

/** Where browser tests leave files for people to look at (gitignored; CI may upload it). */
export const ARTIFACTS = resolve(__dirname, '../../test-artifacts');
/** The first bytes of every PNG file. */
export const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
