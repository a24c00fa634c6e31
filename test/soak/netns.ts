import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';

/** The userspace delayer for kernels without sch_netem (resolved from dist/soak/ or test/soak/). */
const DELAYER = resolve(__dirname, '..', '..', 'test', 'soak', 'nfqueue-delay.py');
const QUEUE = 7;

/**
 * A network namespace of the soak's own, joined to the root namespace by one veth pair on a private
 * /30 (10.201.x.y) used nowhere else: the root end is a local address of this machine, the other end
 * the namespace's only address besides its loopback. The namespace has no default route, so nothing
 * in it reaches beyond the root end. Faults are rules on this pair alone: iptables inside the
 * namespace (DROP for a partition, the `statistic` match for random loss) and a delay on every packet
 * crossing it (tc netem on both ends where the kernel has sch_netem, else the iptables NFQUEUE target
 * and nfqueue-delay.py holding each packet). Deleting the namespace deletes the pair and every rule.
 */
export interface SoakNetns {
  name: string;
  /** The root end's address: what processes in the namespace reach the machine through. */
  rootAddress: string;
  /** The namespace end's address: where a hub in the namespace listens. */
  nsAddress: string;
  /** The command prefix that runs a program in the namespace. */
  exec: string[];
  /** Drops every packet across the pair (a partition: connections hang, nothing is refused). */
  partition(): void;
  /** How a delay is applied here: `tc netem`, `nfqueue` (the userspace delayer), or why neither can. */
  delayMethod: 'netem' | 'nfqueue' | { unavailable: string };
  /** Adds `rttMs` to every round trip across the pair (half of it to each direction). */
  delay(rttMs: number): Promise<void>;
  /** Drops `percent` % of packets in both directions. */
  loss(percent: number): void;
  /** Removes every fault rule. */
  heal(): void;
  /** Deletes the namespace and the pair; idempotent, synchronous (safe in an exit handler). */
  destroy(): void;
}

function run(args: string[]): void {
  execFileSync(args[0], args.slice(1), { stdio: ['ignore', 'ignore', 'pipe'] });
}

function quiet(args: string[]): void {
  try {
    run(args);
  } catch {
    // already gone
  }
}

/** Why the namespace faults cannot run here, or undefined when they can. */
export function netnsUnavailable(): string | undefined {
  if (process.getuid?.() !== 0) return 'not root: network namespaces need CAP_NET_ADMIN';
  try {
    run(['ip', '-V']);
    run(['tc', '-V']);
    run(['iptables', '-V']);
  } catch {
    return 'ip, tc or iptables is not installed';
  }
  return undefined;
}

/** A /30 in 10.201.0.0/16 no interface of this machine uses yet, chosen from `hint` (the pid). */
function freeSubnet(hint: number): { root: string; ns: string } {
  const used = execFileSync('ip', ['-o', '-4', 'addr', 'show'], { encoding: 'utf8' });
  for (let i = 0; i < 16_384; i++) {
    const block = (hint + i) % 16_384;
    const base = block * 4;
    const prefix = `10.201.${base >> 8}.`;
    const root = `${prefix}${(base & 255) + 1}`;
    const ns = `${prefix}${(base & 255) + 2}`;
    if (!used.includes(` ${root}/`) && !used.includes(` ${ns}/`)) return { root, ns };
  }
  throw new Error('no free /30 in 10.201.0.0/16');
}

/** Creates the namespace and its pair; throws (after undoing what it did) when a step fails. */
export function createNetns(): SoakNetns {
  const id = `${process.pid}`;
  const name = `relay-soak-${id}`;
  const rootIf = `rsk${id}a`.slice(0, 15);
  const nsIf = `rsk${id}b`.slice(0, 15);
  const { root, ns } = freeSubnet(process.pid);
  const inNs = (args: string[]) => ['ip', 'netns', 'exec', name, ...args];
  let destroyed = false;
  const destroy = () => {
    if (destroyed) return;
    destroyed = true;
    quiet(['ip', 'link', 'del', rootIf]);
    quiet(['ip', 'netns', 'del', name]);
    process.off('exit', destroy);
  };
  process.on('exit', destroy);
  try {
    run(['ip', 'netns', 'add', name]);
    run(['ip', 'link', 'add', rootIf, 'type', 'veth', 'peer', 'name', nsIf]);
    run(['ip', 'link', 'set', nsIf, 'netns', name]);
    run(['ip', 'addr', 'add', `${root}/30`, 'dev', rootIf]);
    run(['ip', 'link', 'set', rootIf, 'up']);
    run(['ip', '-n', name, 'addr', 'add', `${ns}/30`, 'dev', nsIf]);
    run(['ip', '-n', name, 'link', 'set', nsIf, 'up']);
    run(['ip', '-n', name, 'link', 'set', 'lo', 'up']);
  } catch (err) {
    destroy();
    throw err;
  }

  const clearTc = () => {
    quiet(['tc', 'qdisc', 'del', 'dev', rootIf, 'root']);
    quiet(['ip', 'netns', 'exec', name, 'tc', 'qdisc', 'del', 'dev', nsIf, 'root']);
  };
  let delayMethod: SoakNetns['delayMethod'];
  try {
    run(['tc', 'qdisc', 'add', 'dev', rootIf, 'root', 'netem', 'delay', '1ms']);
    clearTc();
    delayMethod = 'netem';
  } catch {
    try {
      run(['python3', '-c', 'import socket; socket.AF_NETLINK']);
      delayMethod = 'nfqueue';
    } catch {
      delayMethod = { unavailable: 'the kernel has no sch_netem and python3 (for nfqueue-delay.py) is missing' };
    }
  }
  let delayer: ChildProcess | undefined;
  const stopDelayer = () => {
    delayer?.kill('SIGTERM');
    delayer = undefined;
  };
  process.on('exit', stopDelayer);
  return {
    name,
    rootAddress: root,
    nsAddress: ns,
    exec: ['ip', 'netns', 'exec', name],
    partition() {
      run(inNs(['iptables', '-A', 'INPUT', '-i', nsIf, '-j', 'DROP']));
      run(inNs(['iptables', '-A', 'OUTPUT', '-o', nsIf, '-j', 'DROP']));
    },
    delayMethod,
    async delay(rttMs) {
      const oneWay = `${Math.round(rttMs / 2)}`;
      if (delayMethod === 'netem') {
        run(['tc', 'qdisc', 'add', 'dev', rootIf, 'root', 'netem', 'delay', `${oneWay}ms`]);
        run(inNs(['tc', 'qdisc', 'add', 'dev', nsIf, 'root', 'netem', 'delay', `${oneWay}ms`]));
        return;
      }
      if (delayMethod !== 'nfqueue') throw new Error(delayMethod.unavailable);
      // Every packet crossing the pair passes the queue once, out of or into the namespace.
      const child = spawn('ip', ['netns', 'exec', name, 'python3', DELAYER, String(QUEUE), oneWay], {
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      delayer = child;
      await new Promise<void>((resolve, reject) => {
        child.stdout.once('data', () => resolve());
        child.once('exit', (code) => reject(new Error(`nfqueue-delay.py exited (${code})`)));
      });
      const queue = ['-j', 'NFQUEUE', '--queue-num', String(QUEUE), '--queue-bypass'];
      run(inNs(['iptables', '-t', 'mangle', '-A', 'OUTPUT', '-o', nsIf, ...queue]));
      run(inNs(['iptables', '-t', 'mangle', '-A', 'PREROUTING', '-i', nsIf, ...queue]));
    },
    loss(percent) {
      const drop = ['-m', 'statistic', '--mode', 'random', '--probability', String(percent / 100), '-j', 'DROP'];
      run(inNs(['iptables', '-A', 'INPUT', '-i', nsIf, ...drop]));
      run(inNs(['iptables', '-A', 'OUTPUT', '-o', nsIf, ...drop]));
    },
    heal() {
      clearTc();
      quiet(inNs(['iptables', '-F', 'INPUT']));
      quiet(inNs(['iptables', '-F', 'OUTPUT']));
      quiet(inNs(['iptables', '-t', 'mangle', '-F', 'OUTPUT']));
      quiet(inNs(['iptables', '-t', 'mangle', '-F', 'PREROUTING']));
      stopDelayer();
    },
    destroy() {
      stopDelayer();
      process.off('exit', stopDelayer);
      destroy();
    },
  };
}
