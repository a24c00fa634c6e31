'use strict';
// Child processes for the cluster runner (cluster.cjs): each in its own process group, output kept
// as a tail for error messages, and the waits the runner needs (ready by probe, ready by log line).

const { spawn } = require('node:child_process');
const { EventEmitter } = require('node:events');

const LOG_TAIL_LINES = 200;
const POLL_INTERVAL_MS = 100;

/**
 * One child process in its own process group (so a terminal's Ctrl-C reaches only the runner, which
 * then stops the children in order), with a tail of its output kept for error messages.
 */
class ManagedProcess extends EventEmitter {
  constructor(name, command, args, { env, cwd, onLog, stdoutFd } = {}) {
    super();
    this.stdoutFd = stdoutFd;
    this.name = name;
    this.command = command;
    this.args = args;
    this.env = env ?? process.env;
    this.cwd = cwd;
    this.onLog = onLog;
    this.child = null;
    this.tail = [];
    this.exited = Promise.resolve({ code: null, signal: null });
  }

  get pid() {
    return this.child?.pid;
  }

  get running() {
    return this.child !== null && this.child.exitCode === null && this.child.signalCode === null;
  }

  start() {
    if (this.running) throw new Error(`${this.name} is already running`);
    const child = spawn(this.command, this.args, {
      cwd: this.cwd,
      env: this.env,
      detached: true,
      stdio: ['ignore', this.stdoutFd ?? 'pipe', 'pipe'],
    });
    this.child = child;
    this.exited = new Promise((resolve) => {
      child.once('error', (err) => {
        this.record(`spawn failed: ${err.message}`);
        resolve({ code: null, signal: null, error: err });
      });
      child.once('exit', (code, signal) => resolve({ code, signal }));
    });
    for (const stream of [child.stdout, child.stderr].filter(Boolean)) {
      let partial = '';
      stream.setEncoding('utf8');
      stream.on('data', (chunk) => {
        const lines = (partial + chunk).split('\n');
        partial = lines.pop();
        for (const line of lines) this.record(line);
      });
      stream.on('end', () => partial && this.record(partial));
    }
    return this;
  }

  record(line) {
    this.tail.push(line);
    if (this.tail.length > LOG_TAIL_LINES) this.tail.shift();
    this.onLog?.(this.name, line);
    this.emit('line', line);
  }

  /** Sends `signal` to the process and resolves when it has exited. */
  kill(signal = 'SIGTERM') {
    if (this.running) this.child.kill(signal);
    return this.exited;
  }

  /** `signal`, then SIGKILL to the whole group if it is still there after `timeoutMs`. */
  async stop(signal = 'SIGTERM', timeoutMs = 10_000) {
    if (!this.running) return this.exited;
    this.child.kill(signal);
    let timer;
    const timedOut = new Promise((resolve) => (timer = setTimeout(resolve, timeoutMs, 'timeout')));
    const first = await Promise.race([this.exited, timedOut]);
    clearTimeout(timer);
    if (first === 'timeout') {
      this.record(`did not exit ${timeoutMs} ms after ${signal}; sending SIGKILL`);
      this.killGroup('SIGKILL');
    }
    return this.exited;
  }

  /** Synchronous last resort (process 'exit' handler): the whole group, nginx workers included. */
  killGroup(signal) {
    if (this.child?.pid === undefined) return;
    try {
      process.kill(-this.child.pid, signal);
    } catch {
      // already gone
    }
  }

  describeFailure(what) {
    return `${this.name} ${what}; last output:\n${this.tail.slice(-40).join('\n') || '(none)'}`;
  }
}

/**
 * Resolves once `probe()` returns true; rejects when `proc` exits first or `timeoutMs` passes.
 * Polls because a process that starts listening emits nothing the runner could await.
 */
async function waitUntil(proc, what, probe, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  let exited = false;
  proc.exited.then(() => (exited = true));
  for (;;) {
    if (exited) throw new Error(proc.describeFailure(`exited before it was ${what}`));
    if (await probe()) return;
    if (Date.now() > deadline) throw new Error(proc.describeFailure(`was not ${what} after ${timeoutMs} ms`));
    await new Promise((resolve) => setTimeout(resolve, POLL_INTERVAL_MS));
  }
}

async function httpOk(url) {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
    await res.arrayBuffer();
    return res.ok;
  } catch {
    return false;
  }
}

/** Resolves when `proc` prints a line matching `pattern`. */
function waitForLine(proc, pattern, what, timeoutMs) {
  return new Promise((resolve, reject) => {
    if (proc.tail.some((l) => pattern.test(l))) return resolve();
    let settled = false;
    const onLine = (line) => pattern.test(line) && done();
    const done = (err) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      proc.off('line', onLine);
      if (err) reject(err);
      else resolve();
    };
    const timer = setTimeout(() => done(new Error(proc.describeFailure(`was not ${what} after ${timeoutMs} ms`))), timeoutMs);
    proc.on('line', onLine);
    proc.exited.then(() => done(new Error(proc.describeFailure(`exited before it was ${what}`))));
  });
}

module.exports = { ManagedProcess, waitUntil, waitForLine, httpOk };
