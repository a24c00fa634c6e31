/**
 * Every text the widget shows or announces, in English. An integrator replaces any of them with the
 * `strings` property (docs/widget.md, "Strings and languages"); `{n}` and `{name}` are filled in.
 */
export const STRINGS = {
  title: 'Assistant',
  open: 'Open chat',
  close: 'Close chat',
  placeholder: 'Write a message…',
  send: 'Send',
  stop: 'Stop',
  online: 'Online',
  away: 'Away — replies may wait',
  connecting: 'Connecting…',
  offline: "Offline — we'll send when you're back",
  ended: 'Chat ended',
  thinking: 'Thinking…',
  stopped: 'Stopped',
  interrupted: 'The assistant went away — try again',
  timeout: 'Timed out',
  error: 'Something went wrong',
  sending: 'Sending…',
  notSent: 'Not sent — retry',
  copy: 'Copy answer',
  copyCode: 'Copy code',
  copied: 'Copied',
  good: 'Good answer',
  bad: 'Bad answer',
  comment: 'What went wrong? (optional)',
  sendComment: 'Send feedback',
  thanks: 'Thanks for the feedback',
  loadEarlier: 'Load earlier',
  jump: 'Jump to latest',
  unread: '{n} unread',
  you: 'You',
  log: 'Conversation',
  answered: '{name}: {text}',
  thoughtFor: 'Thought for {n} s',
  thought: 'Thought',
  running: 'Running',
  done: 'Done',
  failed: 'Failed',
  denied: 'Denied',
  needsApproval: 'Needs your approval',
  approve: 'Approve',
  deny: 'Deny',
  approvedBy: 'Approved by {name}',
  deniedBy: 'Denied by {name}',
  input: 'Input',
  output: 'Output',
  sources: 'Sources',
  suggestions: 'Suggestions',
  code: 'code',
  joined: '{name} joined the conversation',
  back: "You're back with the assistant",
};

export type Strings = typeof STRINGS;

/** Fills `{key}` placeholders. */
export function fill(template: string, values: Record<string, string | number>): string {
  return template.replace(/\{(\w+)\}/g, (m, key: string) => (key in values ? String(values[key]) : m));
}

/** Languages written right to left: the panel mirrors for them unless `dir` says otherwise. */
export function isRtl(lang: string | null | undefined): boolean {
  return /^(ar|he|fa|ur|ps|yi|dv|ckb)\b/i.test(lang ?? '');
}
