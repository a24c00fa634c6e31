/**
 * The widget's styles, inside its shadow root. The host element resets everything with
 * `!important` (a page rule such as `* { all: unset !important }` matches the host itself, and in
 * the shadow's own context an important declaration wins); nothing inside can be matched by the
 * page. Theming: the `--relay-chat-*` custom properties and the `::part()` names (docs/widget.md).
 * Spacing is on an 8 px grid (4 px for the tightest gaps).
 */
export const STYLES = `
:host{all:initial!important;display:block!important;font:initial!important;color-scheme:light;
--a:var(--relay-chat-accent,#2457d6);--af:var(--relay-chat-accent-fg,#fff);--bg:var(--relay-chat-bg,#fff);--fg:var(--relay-chat-fg,#1b1f27);
--mu:#555c69;--bd:#dfe2e7;--sb:#f3f4f6;--cb:#f6f7f9;--ln:var(--relay-chat-link,#1f4fc2);--ok:#1d7a3a;--bad:#b3261e;
--r:var(--relay-chat-radius,12px);--f:var(--relay-chat-font,system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif);
--mono:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;--hk:#a626a4;--hs:#2b7a0b;--hn:#a35200;--hc:#6a737d;--ht:#1f5fc4;--hv:#b03d00;--ask:#9a6700}
:host(:not([mode=inline])){position:fixed!important;z-index:2147483000!important;inset:auto 0 0 auto!important;width:0!important;height:0!important;margin:0!important}
:host([mode=inline]){height:100%!important;width:100%!important}
:host([theme=dark]){--bg:var(--relay-chat-bg,#15181e);--fg:var(--relay-chat-fg,#e8eaee);--mu:#a7aebb;--bd:#323844;--sb:#1f232b;--cb:#1d2129;--ln:var(--relay-chat-link,#9dbbff);--ok:#6fcf8f;--bad:#ff8a80;--hk:#d2a8ff;--hs:#a5d6ff;--hn:#ffa657;--hc:#9aa4af;--ht:#79c0ff;--hv:#ffb77c;--ask:#e3b341;color-scheme:dark}
@media (prefers-color-scheme:dark){:host(:not([theme])),:host([theme=auto]){--bg:var(--relay-chat-bg,#15181e);--fg:var(--relay-chat-fg,#e8eaee);--mu:#a7aebb;--bd:#323844;--sb:#1f232b;--cb:#1d2129;--ln:var(--relay-chat-link,#9dbbff);--ok:#6fcf8f;--bad:#ff8a80;--hk:#d2a8ff;--hs:#a5d6ff;--hn:#ffa657;--hc:#9aa4af;--ht:#79c0ff;--hv:#ffb77c;--ask:#e3b341;color-scheme:dark}}
*,*::before,*::after{box-sizing:border-box}
[hidden]{display:none!important}
.panel{font:15px/1.5 var(--f);color:var(--fg);background:var(--bg);display:flex;flex-direction:column;overflow:hidden;text-align:start;letter-spacing:normal;word-spacing:normal;text-transform:none;white-space:normal}
:host(:not([mode=inline])) .panel{position:fixed;bottom:96px;right:24px;width:380px;height:min(640px,calc(100vh - 120px));border-radius:var(--r);box-shadow:0 8px 32px rgb(0 0 0/.18),0 1px 4px rgb(0 0 0/.08);border:1px solid var(--bd)}
:host([mode=inline]) .panel{height:100%;border:1px solid var(--bd);border-radius:var(--r)}
:host([position=left]) .panel{right:auto;left:24px}
.launcher{all:unset;position:fixed;bottom:24px;right:24px;width:56px;height:56px;border-radius:50%;background:var(--a);color:var(--af);display:grid;place-items:center;cursor:pointer;box-shadow:0 4px 16px rgb(0 0 0/.2)}
:host([position=left]) .launcher{right:auto;left:24px}
.launcher .icon{width:24px;height:24px}
.badge{position:absolute;top:-4px;right:-4px;min-width:24px;height:24px;padding:0 8px;border-radius:12px;background:var(--bad);color:#fff;font:600 12px/24px var(--f);text-align:center;border:2px solid var(--bg);line-height:20px}
button{font:inherit;color:inherit;cursor:pointer}
button:disabled{cursor:default;opacity:.5}
:focus-visible{outline:2px solid var(--a);outline-offset:2px}
.launcher:focus-visible{outline:3px solid var(--a);outline-offset:3px}
.icon{width:16px;height:16px;fill:none;stroke:currentColor;stroke-width:2;stroke-linecap:round;stroke-linejoin:round;flex:none}
header{display:flex;align-items:center;gap:8px;padding-block:8px;padding-inline:16px 8px;border-bottom:1px solid var(--bd);min-height:64px}
.avatar{width:40px;height:40px;border-radius:50%;background:var(--a);color:var(--af);display:grid;place-items:center;font-weight:600;overflow:hidden;flex:none}
.avatar img{width:100%;height:100%;object-fit:cover}
.who{flex:1;min-width:0}
.title{font-size:16px;line-height:24px;margin:0;font-weight:600;overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
.presence{margin:0;font-size:13px;line-height:16px;color:var(--mu)}
.icon-btn{all:unset;box-sizing:border-box;width:32px;height:32px;display:inline-grid;place-items:center;border-radius:8px;color:var(--mu);cursor:pointer}
.icon-btn:hover{background:var(--sb);color:var(--fg)}
.icon-btn:focus-visible{outline:2px solid var(--a);outline-offset:0}
.close{width:40px;height:40px}
.close .icon{width:20px;height:20px}
.banner{margin:0;padding:8px 16px;background:#fff4d6;color:#5c4300;font-size:13px}
.transcript{flex:1;min-height:0;position:relative;display:flex}
.scroller{flex:1;overflow-y:auto;overscroll-behavior:contain;padding:16px;display:flex;flex-direction:column}
.scroller:focus-visible{outline-offset:-2px}
.list{display:flex;flex-direction:column;gap:16px}
.greeting{margin-bottom:16px;white-space:pre-wrap;overflow-wrap:anywhere}
.earlier{align-self:center;margin-bottom:16px}
.btn{all:unset;box-sizing:border-box;display:inline-flex;align-items:center;gap:8px;padding:4px 16px;min-height:32px;border-radius:8px;border:1px solid var(--bd);background:var(--bg);color:var(--fg);font-size:14px;cursor:pointer}
.btn:hover{background:var(--sb)}
.btn.primary{background:var(--a);border-color:var(--a);color:var(--af)}
.btn:focus-visible,.chip:focus-visible,.link-btn:focus-visible{outline:2px solid var(--a);outline-offset:2px}
.btn:disabled{opacity:.5;cursor:default}
.msg{min-width:0;overflow-wrap:anywhere}
.msg.user{align-self:flex-end;max-width:85%;display:flex;flex-direction:column;align-items:flex-end}
.bubble{background:var(--a);color:var(--af);padding:8px 16px;border-radius:16px 16px 4px 16px;white-space:pre-wrap}
[dir=rtl] .bubble{border-radius:16px 16px 16px 4px}
.msg.user[data-delivery=sending] .bubble{opacity:.7}
.msg.user[data-delivery=failed] .bubble{background:var(--sb);color:var(--fg);border:1px solid var(--bad)}
.status{margin:4px 0 0;font-size:13px;color:var(--mu)}
.day,.msg>time{margin:0;font-size:12px;line-height:16px;color:var(--mu)}
.day{align-self:center}
.msg>time{display:block;margin-top:4px}
.bot>time{float:inline-start;margin-inline-end:4px}
.status:empty{display:none}
.link-btn{all:unset;display:inline-flex;gap:4px;align-items:center;color:var(--bad);cursor:pointer;font-size:13px}
.who+.parts{margin-top:0}
.msg.bot .who{font-size:13px;color:var(--mu);margin:0 0 4px}
.who .avatar{display:inline-grid;width:24px;height:24px;font-size:11px;margin-inline-end:8px}
.sys{align-self:center;text-align:center}
.sys .bubble{background:none;color:var(--mu);font-size:13px}
.md>*:first-child{margin-top:0}.md>*:last-child{margin-bottom:0}
.md p,.md ul,.md ol,.md blockquote,.md .table,.md figure,.md hr{margin:0 0 8px}
.md h3,.md h4,.md h5,.md h6{margin:16px 0 8px;line-height:1.3}
.md h3{font-size:18px}.md h4{font-size:16px}.md h5,.md h6{font-size:15px}
.md ul,.md ol{padding-inline-start:24px}
.md ul.tasks{list-style:none;padding-inline-start:4px}
.md ul.tasks input{margin:0;margin-inline-end:8px;vertical-align:-2px}
.md li+li{margin-top:4px}
.md blockquote{border-inline-start:4px solid var(--bd);padding-inline-start:12px;color:var(--mu)}
.md a,.sources a,.file{color:var(--ln)}
.md code{font:13px/1.4 var(--mono);background:var(--sb);padding:2px 4px;border-radius:4px}
.md hr{border:0;border-top:1px solid var(--bd)}
.table{overflow-x:auto;border:1px solid var(--bd);border-radius:8px}
table{border-collapse:collapse;width:100%;font-size:14px}
th,td{padding:4px 8px;border-bottom:1px solid var(--bd);text-align:start;vertical-align:top}
tr:last-child td{border-bottom:0}
th{background:var(--sb);font-weight:600}
figure.code{border:1px solid var(--bd);border-radius:8px;overflow:hidden;background:var(--cb)}
figure.code figcaption{display:flex;align-items:center;justify-content:space-between;padding-inline:12px 4px;height:32px;border-bottom:1px solid var(--bd);font-size:12px;color:var(--mu)}
figure.code pre{margin:0;padding:8px 12px;overflow-x:auto;font:13px/1.5 var(--mono);tab-size:2}
figure.code code{background:none;padding:0;font:inherit;white-space:pre}
.msg[data-streaming] .parts>.md:last-child>:is(p,h3,h4,h5,h6,blockquote):last-child::after,.msg[data-streaming] .parts>.md:last-child>:is(ul,ol):last-child>li:last-child::after{content:"";display:inline-block;width:8px;height:16px;margin-inline-start:2px;vertical-align:-2px;background:currentColor;opacity:.5;animation:blink 1s steps(2) infinite}
@keyframes blink{50%{opacity:0}}
.actions{display:flex;gap:4px;margin:-4px 0 -8px;opacity:0;transition:opacity .15s}
.msg:hover .actions,.msg:focus-within .actions,.msg[data-rated] .actions,.msg:last-child .actions{opacity:1}
.actions [aria-pressed=true]{color:var(--ln);background:var(--sb)}
.comment{display:flex;gap:8px;margin-top:8px;align-items:flex-end;clear:both}
.comment textarea{flex:1}
.comment p{margin:0}
.muted{color:var(--mu)}
.pre{white-space:pre-wrap}
.step{border:1px solid var(--bd);border-radius:8px;margin:0 0 8px;font-size:14px}
.step summary{display:flex;align-items:center;gap:8px;padding:4px 12px;min-height:32px;cursor:pointer;list-style:none;color:var(--mu)}
.step summary::-webkit-details-marker{display:none}
.step summary:focus-visible{outline:2px solid var(--a);outline-offset:-2px;border-radius:8px}
.step>div{padding:0 12px 8px}
.tool .name{color:var(--fg);font-weight:600;flex:1;min-width:0;overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
.tool .state{display:inline-flex;align-items:center;gap:4px;font-size:13px}
.ok{color:var(--ok)}.bad,.error{color:var(--bad)}.ask{color:var(--ask)}
.spin{animation:spin 1s linear infinite}
@keyframes spin{to{transform:rotate(360deg)}}
.label{font-size:12px;color:var(--mu);margin:8px 0 4px}
pre.json{margin:0;padding:8px;background:var(--cb);border-radius:4px;font:12px/1.5 var(--mono);overflow:auto;max-height:240px;white-space:pre}
.approval{border:1px solid var(--bd);border-radius:8px;padding:8px;margin:0 0 8px;background:var(--sb)}
.approval .step{margin:0 0 8px;background:var(--bg)}
.approval .row{display:flex;gap:8px}
.approval p{margin:8px 0 0;font-size:13px}
.decided{display:flex;align-items:center;gap:4px}
.sources{list-style:none;margin:8px 0 0;padding:0;display:flex;flex-wrap:wrap;gap:8px}
.sources a,.sources li>span{display:inline-flex;gap:8px;align-items:center;max-width:100%;padding:4px 8px;border:1px solid var(--bd);border-radius:8px;font-size:13px;text-decoration:none}
.sources .name{overflow:hidden;text-overflow:ellipsis;white-space:nowrap;max-width:180px;color:var(--fg)}
.num{font-weight:600;min-width:16px;height:16px;line-height:16px;border-radius:4px;background:var(--sb);text-align:center;font-size:11px;color:var(--fg)}
a.image{display:inline-block;margin-block-end:8px;margin-inline-end:8px}
.preview{display:block;max-width:100%;max-height:240px;border-radius:8px;border:1px solid var(--bd)}
a.file{display:inline-flex;gap:8px;align-items:center;padding:8px 12px;border:1px solid var(--bd);border-radius:8px;margin-block-end:8px;margin-inline-end:8px;text-decoration:none;font-size:14px}
.data{margin:0 0 8px}
.thinking{display:flex;align-items:center;gap:8px;color:var(--mu);font-size:14px;margin-top:16px;min-height:24px}
.dots{display:inline-flex;gap:4px}
.dots i{width:6px;height:6px;border-radius:50%;background:currentColor;animation:pulse 1.2s infinite ease-in-out}
.dots i:nth-child(2){animation-delay:.15s}.dots i:nth-child(3){animation-delay:.3s}
@keyframes pulse{0%,80%,100%{opacity:.25}40%{opacity:1}}
.jump{all:unset;position:absolute;bottom:8px;left:50%;transform:translateX(-50%);display:inline-flex;gap:4px;align-items:center;padding:4px 12px;min-height:32px;box-sizing:border-box;border-radius:16px;background:var(--fg);color:var(--bg);font-size:13px;cursor:pointer;box-shadow:0 2px 8px rgb(0 0 0/.2)}
.jump:focus-visible{outline:2px solid var(--a);outline-offset:2px}
.chips{display:flex;flex-wrap:wrap;gap:8px;padding:8px 16px 0}
.chip{all:unset;box-sizing:border-box;padding:4px 12px;min-height:32px;display:inline-flex;align-items:center;border:1px solid var(--a);color:var(--ln);border-radius:16px;font-size:14px;cursor:pointer}
.composer{display:flex;align-items:flex-end;gap:8px;padding-block:8px;padding-inline:16px 8px;border-top:1px solid var(--bd);margin-top:8px;padding-bottom:max(8px,env(safe-area-inset-bottom))}
textarea{flex:1;resize:none;font:15px/24px var(--f);color:var(--fg);background:var(--bg);border:1px solid var(--bd);border-radius:8px;padding:7px 12px;max-height:160px;min-height:40px;outline:none}
textarea:focus-visible{border-color:var(--a);box-shadow:0 0 0 1px var(--a)}
textarea::placeholder{color:var(--mu);opacity:1}
.send{all:unset;box-sizing:border-box;width:40px;height:40px;border-radius:8px;background:var(--a);color:var(--af);display:grid;place-items:center;cursor:pointer;flex:none}
.send .icon{width:20px;height:20px}
.send.stop{background:var(--fg);color:var(--bg)}
.send:disabled{opacity:.45;cursor:default}
.send:focus-visible{outline:2px solid var(--a);outline-offset:2px}
.sr-only{position:absolute;width:1px;height:1px;margin:-1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
.hljs-keyword,.hljs-selector-tag,.hljs-built_in,.hljs-type{color:var(--hk)}.hljs-string,.hljs-attr,.hljs-regexp{color:var(--hs)}.hljs-number,.hljs-literal{color:var(--hn)}.hljs-comment,.hljs-quote{color:var(--hc);font-style:italic}.hljs-title,.hljs-section{color:var(--ht)}.hljs-variable,.hljs-params,.hljs-meta{color:var(--hv)}
@media (max-width:480px){:host(:not([mode=inline])) .panel{inset:0;width:auto;height:100%;height:100dvh;border-radius:0;border:0;padding-top:env(safe-area-inset-top)}
:host(:not([mode=inline])[open]) .launcher{display:none}}
@media (prefers-reduced-motion:reduce){*,*::before,*::after{animation:none!important;transition:none!important}.dots{display:none}}
`;
