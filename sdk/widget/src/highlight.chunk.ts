// The highlighter chunk, /sdk/widget-highlight.mjs: loaded by the widget when a code block first
// settles, never before. highlight.js core with the languages bots answer in most; its output is
// turned into nodes here (spans with hljs classes and text), never parsed as HTML.
import hljs from 'highlight.js/lib/core';
import bash from 'highlight.js/lib/languages/bash';
import c from 'highlight.js/lib/languages/c';
import cpp from 'highlight.js/lib/languages/cpp';
import csharp from 'highlight.js/lib/languages/csharp';
import css from 'highlight.js/lib/languages/css';
import diff from 'highlight.js/lib/languages/diff';
import go from 'highlight.js/lib/languages/go';
import java from 'highlight.js/lib/languages/java';
import javascript from 'highlight.js/lib/languages/javascript';
import json from 'highlight.js/lib/languages/json';
import kotlin from 'highlight.js/lib/languages/kotlin';
import markdown from 'highlight.js/lib/languages/markdown';
import php from 'highlight.js/lib/languages/php';
import python from 'highlight.js/lib/languages/python';
import ruby from 'highlight.js/lib/languages/ruby';
import rust from 'highlight.js/lib/languages/rust';
import shell from 'highlight.js/lib/languages/shell';
import sql from 'highlight.js/lib/languages/sql';
import swift from 'highlight.js/lib/languages/swift';
import typescript from 'highlight.js/lib/languages/typescript';
import xml from 'highlight.js/lib/languages/xml';
import yaml from 'highlight.js/lib/languages/yaml';

const languages = {
  bash,
  c,
  cpp,
  csharp,
  css,
  diff,
  go,
  java,
  javascript,
  json,
  kotlin,
  markdown,
  php,
  python,
  ruby,
  rust,
  shell,
  sql,
  swift,
  typescript,
  xml,
  yaml,
};
for (const [name, language] of Object.entries(languages)) hljs.registerLanguage(name, language);

const ENTITIES: Record<string, string> = { '&amp;': '&', '&lt;': '<', '&gt;': '>', '&quot;': '"', '&#x27;': "'", '&#39;': "'" };

/** Highlighted nodes for `code`, or undefined when the language is unknown (or not given). */
export function highlight(code: string, lang: string | undefined): DocumentFragment | undefined {
  if (!lang || !hljs.getLanguage(lang)) return undefined;
  const html = hljs.highlight(code, { language: lang, ignoreIllegals: true }).value;
  // highlight.js escapes the code and adds only `<span class="…">` and `</span>`: rebuild those.
  const root = document.createDocumentFragment();
  const stack: Node[] = [root];
  for (const piece of html.split(/(<span class="[\w\- .]*">|<\/span>)/)) {
    if (!piece) continue;
    const top = stack[stack.length - 1];
    if (piece === '</span>') {
      if (stack.length > 1) stack.pop();
    } else if (piece.startsWith('<span class="')) {
      const span = document.createElement('span');
      span.className = piece.slice(13, -2);
      top.appendChild(span);
      stack.push(span);
    } else top.appendChild(document.createTextNode(piece.replace(/&(amp|lt|gt|quot|#x27|#39);/g, (m) => ENTITIES[m])));
  }
  return root;
}
