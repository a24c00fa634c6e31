// Lists the longest functions in src/ (lines from a function's first line to its last): `node
// scripts/function-lengths.mjs [folder] [count]`. Functions, methods, constructors, accessors and
// arrow functions or function expressions bound to a name (a variable, property or argument's
// callee); nested functions count again on their own. Files git ignores (generated code) are left out.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { relative } from 'node:path';
import ts from 'typescript';

const root = process.argv[2] ?? 'src';
const count = Number(process.argv[3] ?? 15);

/** The TypeScript files git tracks, or that it would track, below `dir` (generated code is ignored there). */
function files(dir) {
  const listed = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '--', dir], { encoding: 'utf8' });
  return listed.split('\n').filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts') && existsSync(f));
}

function nameOf(node) {
  if (node.name) return node.name.getText();
  if (ts.isConstructorDeclaration(node)) return 'constructor';
  const parent = node.parent;
  if (parent && (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent))) {
    return parent.name.getText();
  }
  return null;
}

function classOf(node) {
  for (let p = node.parent; p; p = p.parent) if (ts.isClassLike(p) && p.name) return `${p.name.text}.`;
  return '';
}

const rows = [];
for (const file of files(root)) {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const visit = (node) => {
    if (ts.isFunctionLike(node) && node.body) {
      const name = nameOf(node);
      if (name !== null) {
        const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
        const last = source.getLineAndCharacterOfPosition(node.getEnd()).line;
        rows.push({ lines: last - first + 1, name: `${classOf(node)}${name}`, at: `${relative('.', file)}:${first + 1}` });
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
}
rows.sort((a, b) => b.lines - a.lines);
console.log('| lines | function | where |\n|---:|---|---|');
for (const r of rows.slice(0, count)) console.log(`| ${r.lines} | \`${r.name}\` | ${r.at} |`);
