import { existsSync } from 'node:fs';
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
