/**
 * `/asyncapi`: the relay protocol for people, rendered from the AsyncAPI document the hub serves at
 * `/asyncapi.json`. Plain HTML with a little inline CSS and no script, so the hub needs no renderer
 * bundle and the page works offline. Every string from the document is escaped.
 */
type Json = Record<string, unknown>;

const CSS = `
  :root { font: 15px/1.5 system-ui, sans-serif; color: #1d2330; background: #f6f7f9; }
  body { margin: 0 auto; max-width: 980px; padding: 24px; }
  h1 { margin: 0 0 4px; } h2 { margin-top: 40px; border-bottom: 2px solid #1d2330; } h3 { margin: 0; font-size: 17px; }
  code { font: 13px ui-monospace, monospace; background: #e9ecf1; padding: 1px 4px; border-radius: 4px; }
  .op { background: #fff; border-radius: 10px; box-shadow: 0 1px 4px #0002; padding: 14px 18px; margin: 14px 0; }
  .op header { display: flex; gap: 10px; align-items: baseline; flex-wrap: wrap; }
  .dir { font: 600 12px ui-monospace, monospace; padding: 2px 8px; border-radius: 999px; color: #fff; background: #2d5fa8; }
  .dir.send { background: #2e7d32; }
  .muted { color: #5c6575; font-size: 13px; }
  table { border-collapse: collapse; width: 100%; margin: 6px 0 10px; font-size: 14px; }
  th, td { text-align: left; padding: 4px 8px; border-bottom: 1px solid #e3e6eb; vertical-align: top; }
  th { font-weight: 600; background: #f0f2f5; }
  .schema { margin: 8px 0 0 0; } .label { font-weight: 600; margin-top: 10px; }
  .yes { color: #2e7d32; font-weight: 600; } .no { color: #b23b3b; }
  nav a { margin-right: 14px; }`;

/** The page for `document` (the AsyncAPI 3 document of the relay protocol). */
export function asyncApiPage(document: Json): string {
  const r = new Renderer(document);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(r.info.title)}</title>
<link rel="icon" href="data:,">
<style>${CSS}</style>
</head>
<body>
<header>
  <h1>${esc(r.info.title)}</h1>
  <div class="muted">AsyncAPI ${esc(document.asyncapi)} · version ${esc(r.info.version)}</div>
  <nav><a href="./asyncapi.json">asyncapi.json</a><a href="./api/">REST API (/api)</a><a href="#codes">Codes</a><a href="#schemas">Schemas</a></nav>
</header>
${markdown(typeof r.info.description === 'string' ? r.info.description : '')}
${r.servers()}
${r.channels()}
${r.codes()}
${r.schemas()}
</body>
</html>
`;
}

class Renderer {
  readonly info: Json;
  private readonly components: Json;

  constructor(private readonly doc: Json) {
    this.info = (doc.info ?? {}) as Json;
    this.components = ((doc.components as Json | undefined)?.schemas ?? {}) as Json;
  }

  servers(): string {
    const rows = Object.entries((this.doc.servers ?? {}) as Record<string, Json>).map(
      ([id, s]) =>
        `<tr><td>${esc(id)}</td><td><code>${esc(s.protocol)}://${esc(s.host)}${esc(s.pathname ?? '')}</code></td><td>${esc(s.description)}</td></tr>`,
    );
    return `<h2 id="servers">Servers</h2><table><tr><th>id</th><th>URL</th><th>notes</th></tr>${rows.join('')}</table>`;
  }

  channels(): string {
    const operations = Object.entries((this.doc.operations ?? {}) as Record<string, Json>);
    return Object.entries((this.doc.channels ?? {}) as Record<string, Json>)
      .map(([id, channel]) => {
        const ops = operations.filter(([, op]) => (op.channel as Json).$ref === `#/channels/${id}`);
        return `<section id="channel-${esc(id)}" data-channel="${esc(channel.address)}">
<h2>Namespace <code>${esc(channel.address)}</code> · ${esc(channel.title)}</h2>
<p>${esc(channel.description)}</p>
${ops.map(([opId, op]) => this.operation(opId, op)).join('\n')}
</section>`;
      })
      .join('\n');
  }

  private operation(id: string, op: Json): string {
    const message = this.resolve((op.messages as Json[])[0]);
    const reply = op.reply ? this.resolve(((op.reply as Json).messages as Json[])[0]) : undefined;
    const action = op.action === 'send' ? 'the hub sends' : 'the hub receives';
    return `<article class="op" id="op-${esc(id)}" data-operation="${esc(id)}" data-event="${esc(message.name)}">
<header><span class="dir ${esc(op.action)}">${esc(op['x-direction'])}</span><h3><code>${esc(message.name)}</code></h3><span class="muted">${action} · ${esc(id)}</span></header>
<p>${esc(op.summary)}${op.description ? ` ${esc(op.description)}` : ''}</p>
<div class="label">Payload: ${this.typeOf(message.payload as Json)}</div>
${this.schema(message.payload as Json)}${this.codeList(message)}
${reply ? `<div class="label">${op.action === 'receive' ? 'Ack / reply' : 'Reply'}: ${this.typeOf(reply.payload as Json)}</div><p class="muted">${esc(reply.summary)}</p>${this.schema(reply.payload as Json)}${this.codeList(reply)}` : '<div class="muted">No ack.</div>'}
</article>`;
  }

  private codeList(message: Json): string {
    const codes = message['x-codes'] as string[] | undefined;
    return codes
      ? `<div class="muted">Codes here: ${codes.map((c) => `<a href="#code-${esc(c)}"><code>${esc(c)}</code></a>`).join(' ')}</div>`
      : '';
  }

  codes(): string {
    const catalogues = Object.entries(this.components).filter(([, s]) => isCodeCatalogue(s as Json));
    return `<h2 id="codes">Codes</h2>${catalogues
      .map(([name, schema]) => {
        const rows = ((schema as Json).anyOf as Json[]).map(
          (c) =>
            `<tr id="code-${esc(c.const)}" data-code="${esc(c.const)}"><td><code>${esc(c.const)}</code></td><td class="${c['x-retryable'] ? 'yes">retryable' : 'no">no'}</td><td>${esc(c.description)}</td></tr>`,
        );
        return `<section id="catalogue-${esc(name)}"><h3 id="schema-${esc(name)}">${esc(name)}</h3><p>${esc((schema as Json).description)}</p>
<table><tr><th>code</th><th>retryable</th><th>meaning</th></tr>${rows.join('')}</table></section>`;
      })
      .join('\n')}`;
  }

  schemas(): string {
    const named = Object.entries(this.components).filter(([, s]) => !isCodeCatalogue(s as Json));
    return `<h2 id="schemas">Schemas</h2>${named
      .map(
        ([name, s]) =>
          `<section><h3 id="schema-${esc(name)}">${esc(name)}</h3><p class="muted">${esc((s as Json).description ?? '')}</p>${this.schema(s as Json, true)}</section>`,
      )
      .join('\n')}`;
  }

  /** A schema's body: the properties of an object, the variants of a union; nothing for scalars. */
  private schema(schema: Json, expandRef = false): string {
    const s = expandRef || !schema.$ref ? this.deref(schema) : schema;
    if (s.$ref) return this.schema(this.deref(s));
    if (Array.isArray(s.anyOf) && !isCodeCatalogue(s)) {
      return `<div class="schema">One of:<ol>${(s.anyOf as Json[]).map((v) => `<li>${this.typeOf(v)}${this.schema(v)}</li>`).join('')}</ol></div>`;
    }
    if (s.type !== 'object' || !s.properties) return '';
    const required = new Set((s.required as string[] | undefined) ?? []);
    const rows = Object.entries(s.properties as Record<string, Json>).map(
      ([name, p]) =>
        `<tr><td><code>${esc(name)}</code></td><td>${this.typeOf(p)}</td><td>${required.has(name) ? 'yes' : 'no'}</td><td>${esc(this.deref(p).description ?? '')}${constraints(this.deref(p))}</td></tr>`,
    );
    const extra = s.additionalProperties === true && rows.length === 0 ? '<div class="muted">Any JSON object.</div>' : '';
    return rows.length
      ? `<table class="schema"><tr><th>field</th><th>type</th><th>required</th><th>notes</th></tr>${rows.join('')}</table>`
      : extra;
  }

  /** A short type: a link for named schemas, `const` values, `string | null`, `T[]`. */
  private typeOf(schema: Json): string {
    if (typeof schema.$ref === 'string') {
      const name = schema.$ref.split('/').pop()!;
      return `<a href="#schema-${esc(name)}"><code>${esc(name)}</code></a>`;
    }
    if (schema.const !== undefined) return `<code>${esc(JSON.stringify(schema.const))}</code>`;
    if (Array.isArray(schema.anyOf)) return (schema.anyOf as Json[]).map((v) => this.typeOf(v)).join(' | ');
    if (schema.type === 'array') return `${this.typeOf(schema.items as Json)}[]`;
    const type = typeof schema.type === 'string' ? schema.type : 'any JSON';
    return `<code>${esc(type)}${schema.format ? ` (${esc(schema.format)})` : ''}</code>`;
  }

  private deref(schema: Json): Json {
    const ref = schema.$ref;
    return typeof ref === 'string' ? ((this.components[ref.split('/').pop()!] as Json | undefined) ?? {}) : schema;
  }

  private resolve(ref: Json): Json {
    let node: unknown = this.doc;
    for (const part of String(ref.$ref).slice(2).split('/')) node = (node as Json)[part];
    return node as Json;
  }
}

function isCodeCatalogue(schema: Json): boolean {
  return Array.isArray(schema.anyOf) && (schema.anyOf as Json[]).every((c) => typeof c['x-retryable'] === 'boolean');
}

function constraints(s: Json): string {
  const parts = ['minLength', 'maxLength', 'minimum', 'maximum', 'pattern', 'default']
    .filter((k) => s[k] !== undefined)
    .map((k) => `${k} <code>${esc(s[k])}</code>`);
  return parts.length ? ` <span class="muted">${parts.join(', ')}</span>` : '';
}

/** The little Markdown the document's description uses: paragraphs, `- ` lists, `code`, **bold**. */
function markdown(text: string): string {
  const inline = (line: string) =>
    esc(line)
      .replace(/`([^`]+)`/g, '<code>$1</code>')
      .replace(/\*\*([^*]+)\*\*/g, '<strong>$1</strong>');
  return text
    .split(/\n{2,}/)
    .map((block) => {
      const items = block.split(/\n(?=- )/);
      if (items[0].startsWith('- '))
        return `<ul>${items.map((i) => `<li>${inline(i.slice(2).replace(/\n\s*/g, ' '))}</li>`).join('')}</ul>`;
      return `<p>${inline(block.replace(/\n/g, ' '))}</p>`;
    })
    .join('\n');
}

function esc(value: unknown): string {
  const text = typeof value === 'string' ? value : value === undefined || value === null ? '' : JSON.stringify(value);
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
