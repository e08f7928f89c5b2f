'use strict';
// Cell runner for context_kernel.kernel_processes.node (the ck-javascript / ck-typescript kernels).
//
// The Python kernel starts one node process running this file and keeps it for the
// kernel's life, so globals persist between cells. Requests and replies are JSON lines
// on a socket whose fd is CK_NODE_CTL_FD; the cell's own console output goes to the
// real stdout/stderr. When a cell ends, the end marker is written to both stdout and
// stderr before the reply, so the kernel knows it has read all of that cell's output.
//
// Each cell is rewritten REPL-style (with the `typescript` package's parser):
// top-level let/const/class/function/import become globals that a later cell may
// declare again, the body runs inside an async function (top-level await), and the
// value of a final expression statement is returned for display.
//
// The project's packages: node starts in the project directory, and cells resolve `require`
// and `import` as a file in that directory would (node_modules there and in every parent),
// whatever the cell later does with process.chdir. Not through NODE_PATH, which kernels never get.

const { AsyncLocalStorage } = require('async_hooks');
const fs = require('fs');
const net = require('net');
const path = require('path');
const util = require('util');
const vm = require('vm');
const Module = require('module');

const { createRequire, SourceMap } = Module;

const MARK = `\u0000ck-end:${process.env.CK_NODE_MARK || ''}\u0000`;
const CTL_FD = Number(process.env.CK_NODE_CTL_FD);
const TS_DIR = process.env.CK_NODE_TYPESCRIPT || '';
for (const key of ['CK_NODE_MARK', 'CK_NODE_CTL_FD', 'CK_NODE_TYPESCRIPT']) delete process.env[key];

const PROJECT_DIR = process.cwd(); // the kernel starts node in the project directory
const CELL_FILE = path.join(PROJECT_DIR, '[cell]'); // what cells resolve packages from; never written
const ts = loadTypeScript();
const DRIVER = __filename;
let cellNumber = 0;
let cellLines = 0; // lines of the current cell's JavaScript: the wrapper call comes after them
const sourceMaps = new Map(); // cell number -> SourceMap from TypeScript to the JavaScript run
let running = null; // {interrupt: (err) => void} while a cell's promise is pending

function loadTypeScript() {
  const tries = [TS_DIR, 'typescript'].filter(Boolean);
  for (const spec of tries) {
    try {
      return spec === 'typescript'
        ? require(require.resolve('typescript', { paths: [PROJECT_DIR] }))
        : require(spec);
    } catch (_) { /* try the next place */ }
  }
  return null;
}

// The names a REPL session expects to find at the top level.
function installGlobals() {
  globalThis.require = projectRequire();
  globalThis.module = { exports: {}, require: globalThis.require, filename: CELL_FILE };
  globalThis.exports = globalThis.module.exports;
  globalThis.__filename = CELL_FILE;
  globalThis.__dirname = PROJECT_DIR;
}

function interrupted() {
  const err = new Error('Script execution was interrupted by `SIGINT`');
  err.name = 'KeyboardInterrupt';
  return err;
}

// ----- source rewriting -----------------------------------------------------------

function stripTypes(code) {
  const out = ts.transpileModule(code, {
    fileName: 'cell.ts',
    reportDiagnostics: true,
    compilerOptions: {
      target: ts.ScriptTarget.ES2022,
      // Preserve (TypeScript >= 5.4) keeps `import x = require('m')` as a require; ESNext drops it
      module: ts.ModuleKind.Preserve !== undefined ? ts.ModuleKind.Preserve : ts.ModuleKind.ESNext,
      verbatimModuleSyntax: true, // keep imports used only by later cells
      moduleDetection: ts.ModuleDetectionKind.Force,
      inlineSourceMap: true,
    },
  });
  const diag = (out.diagnostics || []).find((d) => d.category === ts.DiagnosticCategory.Error);
  if (diag) throw diagnosticError(diag, code);
  // node applies source maps to modules only, so stack lines of cells are mapped here
  const at = out.outputText.lastIndexOf('//# sourceMappingURL=data:application/json;base64,');
  if (at < 0) return { js: out.outputText, map: null };
  const payload = out.outputText.slice(at).split('base64,')[1];
  let map = null;
  try { map = new SourceMap(JSON.parse(Buffer.from(payload, 'base64').toString('utf8'))); } catch (_) { /* unmapped lines */ }
  return { js: out.outputText.slice(0, at), map };
}

function diagnosticError(diag, code) {
  const err = new SyntaxError(ts.flattenDiagnosticMessageText(diag.messageText, '\n'));
  if (diag.start !== undefined) {
    const { line, character } = ts.getLineAndCharacterOfPosition(
      diag.file || ts.createSourceFile('cell', code, ts.ScriptTarget.ES2022), diag.start);
    err.stack = `SyntaxError: ${err.message} (line ${line + 1}, column ${character + 1})`;
  }
  return err;
}

function bindingNames(name, into) {
  if (ts.isIdentifier(name)) into.push(name.text);
  else for (const el of name.elements) if (!ts.isOmittedExpression(el)) bindingNames(el.name, into);
  return into;
}

// Rewrites top-level declarations into assignments to hoisted globals; returns the
// script text. Line breaks of the cell are kept so stack line numbers stay right.
function replRewrite(source) {
  const sf = ts.createSourceFile('cell.js', source, ts.ScriptTarget.ES2022, true, ts.ScriptKind.JS);
  const diag = (sf.parseDiagnostics || [])[0];
  if (diag) throw diagnosticError({ ...diag, file: sf }, source);
  const js = projectImports(sf, source);
  const hoisted = new Set();
  const prelude = [];
  const edits = []; // [start, end, text]
  const text = (node) => js.slice(node.getStart(sf), node.end);
  const stmts = sf.statements;
  // the value shown is that of the last statement, not counting TS's trailing `export {}`
  let last = stmts.length - 1;
  while (last >= 0 && (ts.isExportDeclaration(stmts[last]) || ts.isEmptyStatement(stmts[last]))) last -= 1;
  stmts.forEach((st, i) => {
    const K = ts.SyntaxKind;
    const dropModifiers = () => (st.modifiers || [])
      .filter((m) => m.kind === K.ExportKeyword || m.kind === K.DefaultKeyword)
      .forEach((m) => edits.push([m.getStart(sf), m.end, '']));
    if (ts.isVariableStatement(st)) {
      const lexical = (st.declarationList.flags & (ts.NodeFlags.Let | ts.NodeFlags.Const)) !== 0;
      if (st.declarationList.flags & ts.NodeFlags.Using) return;
      const parts = [];
      for (const d of st.declarationList.declarations) {
        bindingNames(d.name, []).forEach((n) => hoisted.add(n));
        if (d.initializer) parts.push(`(${text(d.name)} = ${text(d.initializer)})`);
        else if (lexical && ts.isIdentifier(d.name)) parts.push(`(${d.name.text} = undefined)`);
      }
      edits.push([st.getStart(sf), st.end, `;${parts.join(', ')};`]);
    } else if (ts.isFunctionDeclaration(st) && st.name) {
      dropModifiers();
      hoisted.add(st.name.text);
      prelude.push(`globalThis[${JSON.stringify(st.name.text)}] = ${st.name.text};`);
    } else if (ts.isClassDeclaration(st) && st.name) {
      hoisted.add(st.name.text);
      const body = js.slice((st.modifiers || []).reduce((p, m) => Math.max(p, m.end), st.getStart(sf)), st.end);
      edits.push([st.getStart(sf), st.end, `;${st.name.text} = ${body.trim()};`]);
    } else if (ts.isImportDeclaration(st)) {
      edits.push([st.getStart(sf), st.end, rewriteImport(st, text, hoisted)]);
    } else if (ts.isExportDeclaration(st)) {
      edits.push([st.getStart(sf), st.end, ';']);
    } else if (ts.isExportAssignment(st)) {
      edits.push([st.getStart(sf), st.expression.getStart(sf), ';']);
    } else if (ts.isExpressionStatement(st) && i === last) {
      edits.push([st.getStart(sf), st.end, `;return { value: (${text(st.expression)}) };`]);
    }
  });
  let body = js;
  for (const [start, end, repl] of edits.sort((a, b) => b[0] - a[0])) {
    body = body.slice(0, start) + repl + body.slice(end);
  }
  const vars = hoisted.size ? `var ${[...hoisted].join(', ')};` : '';
  return `${vars}(async () => {${prelude.join('')}${body}\n})()`;
}

// Every import() call of the cell, at any depth, calls IMPORT instead: `import` and IMPORT have
// the same length, so the tree's positions (and the columns of stack lines) stay right.
function projectImports(sf, js) {
  const at = [];
  const visit = (node) => {
    if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      at.push(node.expression.getStart(sf));
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  let out = js;
  for (const start of at) out = out.slice(0, start) + IMPORT + out.slice(start + IMPORT.length);
  return out;
}

function rewriteImport(st, text, hoisted) {
  // `with { type: 'json' }` becomes import()'s options
  const attributes = st.attributes || st.assertClause;
  const options = attributes ? `, { with: ${text(attributes).replace(/^(with|assert)\s*/, '')} }` : '';
  const from = `(await ${IMPORT}(${text(st.moduleSpecifier)}${options}))`;
  const clause = st.importClause;
  if (!clause) return `;${from};`;
  const parts = [];
  if (clause.name) {
    hoisted.add(clause.name.text);
    parts.push(`default: ${clause.name.text}`);
  }
  const nb = clause.namedBindings;
  if (nb && ts.isNamespaceImport(nb)) {
    hoisted.add(nb.name.text);
    const ns = `;${nb.name.text} = ${from};`;
    return parts.length ? `${ns}({${parts.join(', ')}} = ${nb.name.text});` : ns;
  }
  for (const el of (nb && nb.elements) || []) {
    if (el.isTypeOnly) continue;
    hoisted.add(el.name.text);
    parts.push(`${JSON.stringify((el.propertyName || el.name).text)}: ${el.name.text}`);
  }
  return `;({${parts.join(', ')}} = ${from});`;
}

// ----- running a cell -------------------------------------------------------------

function defineFileGlobals(file) {
  if (!file) return;
  globalThis.FILE_CONTENT_PATH = file;
  globalThis.file_path = file;
  globalThis.FILE_CONTENT = fs.readFileSync(file, 'utf8');
}

function compile(code, language, filename) {
  let js = code;
  if (language === 'typescript') {
    if (!ts) throw setupError();
    const stripped = stripTypes(code);
    js = stripped.js;
    if (stripped.map) sourceMaps.set(cellNumber, stripped.map);
  }
  // without the parser, cells still run (and see top-level await), but declarations stay local
  let source = ts ? replRewrite(js) : `(async () => {${js}\n})()`;
  cellLines = js.split('\n').length;
  return new vm.Script(source, { filename, importModuleDynamically: IMPORT_HOOK });
}

// A cell's import declarations and import() calls go to globalThis[IMPORT] (see replRewrite):
// node's own ESM import() from a CommonJS module compiled under the name CELL_FILE, which node
// resolves from that file's URL ("import" conditions, exports, node_modules from the project dir
// up), on every node version. No file is read or written for it. vm's own hook for import() in
// a script needs node >= 20.12 (its function form needs --experimental-vm-modules since 20.10),
// so it only serves what the rewrite does not see (cells run without the typescript parser).
const IMPORT = '$ckImp';
const importFromProject = (() => {
  const importer = new Module(CELL_FILE, null);
  importer.filename = CELL_FILE;
  importer.paths = Module._nodeModulePaths(PROJECT_DIR);
  importer._compile('module.exports = (spec, options) => import(spec, options);', CELL_FILE);
  const load = importer.exports;
  return (spec, options) => load(spec, options).catch((err) => { throw notFound(err, spec); });
})();
Object.defineProperty(globalThis, IMPORT, { value: importFromProject, writable: false, enumerable: false });

const IMPORT_HOOK = (vm.constants && vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER) ||
  ((spec, _script, attributes) => importFromProject(spec, attributes && { with: attributes }));
// The built-in loader is flagged experimental; its warning would land in every first import.
const emitWarning = process.emitWarning;
process.emitWarning = function (warning, ...rest) {
  if (String(warning).includes('USE_MAIN_CONTEXT_DEFAULT_LOADER')) return;
  return emitWarning.call(process, warning, ...rest);
};

// require as a file of the project has it; a package it cannot find says where it looked.
function projectRequire() {
  const base = createRequire(CELL_FILE);
  const require = function require(id) {
    try { return base(id); } catch (err) { throw notFound(err, id); }
  };
  const resolve = function resolve(id, options) {
    try { return base.resolve(id, options); } catch (err) { throw options ? err : notFound(err, id); }
  };
  resolve.paths = base.resolve.paths;
  return Object.assign(require, { resolve, main: base.main, extensions: base.extensions, cache: base.cache });
}

// node's "not found" names neither the project nor its parents (its ESM error names our
// importer, "[cell]"; its CommonJS one adds a require stack of that name): one line that says
// where a cell's own require/import looked. What a package fails to find inside it is left as node says.
function notFound(err, spec) {
  if (!err || typeof spec !== 'string' || spec.startsWith('node:') || spec.startsWith('file:')) return err;
  const bare = !/^(\.{1,2}(\/|$)|\/)/.test(spec);
  const name = spec.split('/').slice(0, spec.startsWith('@') ? 2 : 1).join('/');
  const message = String(err.message);
  // node's ESM message names the package (not the subpath), or a relative module resolved
  const esm = bare ? `Cannot find package '${name}' imported from ${CELL_FILE}`
    : `Cannot find module '${path.resolve(PROJECT_DIR, spec)}' imported from ${CELL_FILE}`;
  const ours = (err.code === 'MODULE_NOT_FOUND' && message.startsWith(`Cannot find module '${spec}'`) &&
      (err.requireStack || [CELL_FILE]).every((f) => f === CELL_FILE)) ||
    (err.code === 'ERR_MODULE_NOT_FOUND' && message === esm);
  if (!ours) return err;
  err.message = bare
    ? `Cannot find package '${spec}': looked in node_modules of the project directory (${PROJECT_DIR}) and ` +
      `of every parent directory; install it in the project (npm install ${name})`
    : `Cannot find module '${spec}': looked for it relative to the project directory (${PROJECT_DIR})`;
  const frames = String(err.stack || '').split('\n').filter((l) => /^\s+at /.test(l));
  err.stack = [`${err.name}: ${err.message}`, ...frames].join('\n');
  return err;
}

function setupError() {
  const err = new Error('the npm package "typescript" is missing: run context-kernel kernels install');
  err.name = 'KernelSetupError';
  return err;
}

// ----- timers: an interrupted cell's timers stop with it ----------------------------

// Each timer is attributed to the cell whose code, or whose callbacks at any depth, set it:
// interrupting a cell then stops a setInterval flood as well as the code that started it.
const cellOf = new AsyncLocalStorage();
const timers = new Map(); // handle -> {cell, clear}

function trackTimers() {
  for (const [set, clear, once] of [
    ['setTimeout', 'clearTimeout', true],
    ['setInterval', 'clearInterval', false],
    ['setImmediate', 'clearImmediate', true],
  ]) {
    const originalSet = globalThis[set];
    const originalClear = globalThis[clear];
    const tracked = function (callback, ...rest) {
      const cell = cellOf.getStore();
      if (cell === undefined || typeof callback !== 'function') return originalSet(callback, ...rest);
      let handle;
      const run = once ? function (...args) { timers.delete(handle); return callback.apply(this, args); } : callback;
      handle = originalSet(run, ...rest);
      timers.set(handle, { cell, clear: originalClear });
      return handle;
    };
    // keeps util.promisify.custom, so util.promisify(setTimeout) still works
    Object.defineProperties(tracked, Object.getOwnPropertyDescriptors(originalSet));
    globalThis[set] = tracked;
    globalThis[clear] = function (handle) {
      timers.delete(handle);
      return originalClear(handle);
    };
  }
}

function stopTimersOf(cell) {
  for (const [handle, timer] of timers) {
    if (timer.cell !== cell) continue;
    timers.delete(handle);
    timer.clear(handle);
  }
}

async function runCell(req) {
  cellNumber += 1;
  const filename = path.join(PROJECT_DIR, `cell${cellNumber}`);
  defineFileGlobals(req.file);
  const script = compile(req.code, req.language, filename);
  const promise = cellOf.run(cellNumber, () => script.runInThisContext({ breakOnSigint: true, displayErrors: true }));
  const stop = new Promise((_, reject) => { running = { interrupt: reject }; });
  promise.catch(() => {}); // once interrupted, its later failure is nobody's business
  const result = await Promise.race([promise, stop]);
  return result && typeof result === 'object' && 'value' in result ? result.value : undefined;
}

// Stack lines that are about the user's code: no driver, node internals or wrapper call.
function cleanStack(err) {
  const cwd = PROJECT_DIR + path.sep;
  const wrapperCall = new RegExp(`at cell${cellNumber}:${cellLines + 1}:\\d+$`);
  return String(err.stack || `${err.name}: ${err.message}`).split('\n')
    .filter((l) => !l.includes(DRIVER) &&
      !/\(node:(vm|internal|async_hooks)|at node:(vm|internal)|runInThisContext/.test(l))
    .map((l) => l.split(cwd).join(''))
    .filter((l) => !wrapperCall.test(l))
    .map((l) => l.replace(/\bcell(\d+):(\d+):(\d+)/g, (whole, n, line, col) => {
      const map = sourceMaps.get(Number(n));
      const hit = map && map.findEntry(Number(line) - 1, Number(col) - 1);
      return hit && hit.originalLine !== undefined
        ? `cell${n}:${hit.originalLine + 1}:${hit.originalColumn + 1}` : whole;
    }));
}

function describeError(err) {
  if (err && err.code === 'ERR_SCRIPT_EXECUTION_INTERRUPTED') err = interrupted();
  if (err instanceof Error || (err && typeof err === 'object' && 'message' in err && 'name' in err)) {
    const traceback = cleanStack(err);
    return { ename: String(err.name || 'Error'), evalue: String(err.message), traceback };
  }
  const shown = util.inspect(err);
  return { ename: 'Uncaught', evalue: shown, traceback: [`Uncaught ${shown}`] };
}

// process.stdout/stderr write straight to their (blocking) fds. Node's own pipe streams
// queue writes to a full pipe in memory, so a flood grows without bound and a cell's end
// waits behind all of it; and an interrupt that lands inside the stream's code (a SIGINT
// stops a cell between any two statements) leaves it stuck, so nothing written after it,
// the end marker included, ever goes out. A blocking write has no state to leave half-done,
// and a writer waits for the kernel, which reads at the pace its own reader takes output.
function writeAll(fd, data) {
  for (let done = 0; done < data.length;) done += fs.writeSync(fd, data, done);
}

function directWrite(fd) {
  return function write(chunk, encoding, callback) {
    if (typeof encoding === 'function') [callback, encoding] = [encoding, undefined];
    let error = null;
    try {
      writeAll(fd, typeof chunk === 'string' ? Buffer.from(chunk, encoding || 'utf8') : chunk);
    } catch (err) {
      error = err; // a closed or broken pipe: the output is lost, the cell goes on
    }
    if (typeof callback === 'function') process.nextTick(callback, error);
    return true;
  };
}

for (const [fd, stream] of [[1, process.stdout], [2, process.stderr]]) {
  if (stream._handle && typeof stream._handle.setBlocking === 'function') stream._handle.setBlocking(true);
  stream.write = directWrite(fd);
}

// After everything the cell wrote, whatever it did to process.stdout/stderr since.
function writeMarks() {
  for (const fd of [1, 2]) {
    try { writeAll(fd, Buffer.from(MARK)); } catch (_) { /* the kernel stops waiting after MARK_WAIT */ }
  }
}

function finish(reply) {
  running = null;
  writeMarks();
  ctl.write(`${JSON.stringify(reply)}\n`);
}

const RESULT_CAP = 1000000; // characters of a displayed value; the control line has a limit

function shown(value) {
  const text = util.inspect(value, { depth: 4, colors: false });
  return text.length <= RESULT_CAP ? text
    : `${text.slice(0, RESULT_CAP)}\n... [${text.length - RESULT_CAP} more characters]`;
}

async function handle(req) {
  let reply;
  try {
    const value = await runCell(req);
    reply = { status: 'ok' };
    if (value !== undefined) reply.result = shown(value);
  } catch (err) {
    reply = { status: 'error', ...describeError(err) };
    if (reply.ename === 'KeyboardInterrupt') stopTimersOf(cellNumber);
  }
  finish(reply);
}

// ----- wiring ---------------------------------------------------------------------

// Idle or awaiting: SIGINT ends the awaited cell (its pending work may still run).
// Inside synchronous code, vm's breakOnSigint throws instead and this is not called.
process.on('SIGINT', () => { if (running) running.interrupt(interrupted()); });
// Errors from callbacks that outlive their cell are reported, not fatal.
process.on('uncaughtException', (err) => { process.stderr.write(`Uncaught ${util.inspect(err)}\n`); });
process.on('unhandledRejection', (err) => {
  process.stderr.write(`Unhandled promise rejection: ${util.inspect(err)}\n`);
});

installGlobals();
trackTimers();
const ctl = new net.Socket({ fd: CTL_FD, readable: true, writable: true });
let pending = '';
let queue = Promise.resolve();
ctl.setEncoding('utf8');
ctl.on('data', (chunk) => {
  pending += chunk;
  let nl;
  while ((nl = pending.indexOf('\n')) >= 0) {
    const req = JSON.parse(pending.slice(0, nl));
    pending = pending.slice(nl + 1);
    queue = queue.then(() => handle(req));
  }
});
ctl.on('end', () => process.exit(0));
ctl.write(`${JSON.stringify({ ready: true, typescript: ts ? ts.version : null, node: process.version })}\n`);
