import { h } from './dom';
import { icon } from './icons';
import type { Strings } from './strings';

/**
 * The composer: an auto-growing textarea (1 to 6 lines; Enter sends, Shift+Enter breaks the line)
 * and one button that is Send, disabled while the text is empty, or Stop while the bot answers
 * (Enter still sends then: the next message waits its turn at the bot, as offline ones do).
 */
export class Composer {
  readonly element: HTMLFormElement;
  private readonly input: HTMLTextAreaElement;
  private readonly button: HTMLButtonElement;
  private answering = false;

  constructor(
    private readonly strings: Strings,
    private readonly on: { send(text: string): void; stop(): void },
  ) {
    this.input = h('textarea', { rows: 1, 'aria-label': strings.placeholder, placeholder: strings.placeholder, enterkeyhint: 'send' });
    this.button = h('button', { type: 'submit', class: 'send' });
    this.element = h('form', { class: 'composer', part: 'composer' }, this.input, this.button);
    this.input.addEventListener('input', () => this.fit());
    this.input.addEventListener('keydown', (e) => {
      if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
        e.preventDefault();
        this.submit();
      }
    });
    this.element.addEventListener('submit', (e) => {
      e.preventDefault();
      if (this.answering) this.on.stop();
      else this.submit();
    });
    this.render();
  }

  /** Whether the bot is answering: the button becomes Stop. */
  busy(answering: boolean): void {
    if (answering === this.answering) return;
    const hadFocus =
      this.element.getRootNode() instanceof ShadowRoot && (this.element.getRootNode() as ShadowRoot).activeElement === this.button;
    this.answering = answering;
    this.render();
    if (hadFocus) (this.button.disabled ? this.input : this.button).focus();
  }

  focus(): void {
    this.input.focus();
  }

  private submit(): void {
    const text = this.input.value.trim();
    if (!text) return;
    this.input.value = '';
    this.fit();
    this.on.send(text);
  }

  private fit(): void {
    this.input.style.height = 'auto';
    this.input.style.height = `${Math.min(this.input.scrollHeight, 6 * 24 + 16)}px`;
    this.render();
  }

  private render(): void {
    const label = this.answering ? this.strings.stop : this.strings.send;
    this.button.replaceChildren(icon(this.answering ? 'stop' : 'send'));
    this.button.setAttribute('aria-label', label);
    this.button.title = label;
    this.button.classList.toggle('stop', this.answering);
    this.button.disabled = !this.answering && this.input.value.trim() === '';
  }
}
