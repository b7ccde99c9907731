// The rules every schema bridge serves must follow so that real MCP clients accept it (issue #6).
// tests/python/schema_rules.py states the same rules for the Python test; keep the two in step.

/** `format` values defined by JSON Schema 2020-12. */
const STANDARD_FORMATS = new Set([
  'date-time', 'date', 'time', 'duration', 'email', 'idn-email', 'hostname', 'idn-hostname', 'ipv4', 'ipv6',
  'uri', 'uri-reference', 'iri', 'iri-reference', 'uuid', 'uri-template', 'json-pointer',
  'relative-json-pointer', 'regex',
]);
/** Largest integer every JSON parser holds exactly: 2^53 - 1. */
const MAX_SAFE = 2 ** 53 - 1;
/** Keywords whose value is one subschema, a map of subschemas, or a list of subschemas. */
const ONE = ['items', 'additionalProperties', 'not', 'if', 'then', 'else', 'contains', 'propertyNames',
  'unevaluatedItems', 'unevaluatedProperties', 'additionalItems', 'contentSchema'];
const MAP = ['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas'];
const LIST = ['allOf', 'anyOf', 'oneOf', 'prefixItems'];
const BOUNDS = ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum'];

const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
const pointer = (segment) => String(segment).replaceAll('~', '~0').replaceAll('/', '~1');

/**
 * Problems of one schema document (a tool's `inputSchema` or `outputSchema`), each as
 * "<JSON pointer>: <what>"; empty when it follows every rule:
 * root `{"type":"object","properties":{…}}` without `$schema`/`oneOf`/`anyOf`/`allOf`;
 * definitions only at the root and every `$ref` a `#/$defs/<name>` that exists there (never `#`,
 * which is the wrapper, not a type); no boolean schemas (but `"additionalProperties": false`); no type arrays; no `const`; standard
 * `format`s only; no integer bound beyond ±(2^53 − 1).
 */
export function schemaProblems(doc) {
  const problems = [];
  if (!isObject(doc)) return [`: not an object schema: ${JSON.stringify(doc)}`];
  if (doc.type !== 'object') problems.push(`: root type is ${JSON.stringify(doc.type)}, not "object"`);
  if (!isObject(doc.properties)) problems.push(': root has no "properties" object');
  for (const k of ['oneOf', 'anyOf', 'allOf']) if (k in doc) problems.push(`: ${k} at the root`);

  const walk = (s, at) => {
    const here = at || '/';
    if (typeof s === 'boolean') {
      // `"additionalProperties": false` is the one boolean every client understands (and some require).
      if (s === false && /\/(additionalProperties|unevaluatedProperties)$/.test(at)) return;
      return problems.push(`${here}: boolean schema ${s}`);
    }
    if (!isObject(s)) return problems.push(`${here}: not a schema: ${JSON.stringify(s)}`);
    if ('$schema' in s) problems.push(`${here}: $schema`);
    if (at !== '' && ('$defs' in s || 'definitions' in s)) problems.push(`${here}: definitions below the document root`);
    if (Array.isArray(s.type)) problems.push(`${here}: type array ${JSON.stringify(s.type)}`);
    if ('const' in s) problems.push(`${here}: const ${JSON.stringify(s.const)}`);
    if ('format' in s && !STANDARD_FORMATS.has(s.format)) problems.push(`${here}: non-standard format ${JSON.stringify(s.format)}`);
    for (const b of BOUNDS) {
      if (typeof s[b] === 'number' && Math.abs(s[b]) > MAX_SAFE) problems.push(`${here}: ${b} ${s[b]} beyond ±(2^53 − 1)`);
    }
    if ('$ref' in s) {
      const m = /^#\/(\$defs|definitions)\/([^/]+)$/.exec(s.$ref);
      const name = m && m[2].replaceAll('~1', '/').replaceAll('~0', '~');
      if (s.$ref === '#') problems.push(`${here}: $ref "#" is the whole document, not a definition`);
      else if (!m || !isObject(doc[m[1]]) || !(name in doc[m[1]])) {
        problems.push(`${here}: $ref ${JSON.stringify(s.$ref)} does not resolve to a definition at the document root`);
      }
    }
    for (const k of ONE) if (k in s) walk(s[k], `${at}/${k}`);
    for (const k of MAP) {
      if (!(k in s)) continue;
      if (!isObject(s[k])) problems.push(`${at}/${k}: not a map of schemas`);
      else for (const [name, sub] of Object.entries(s[k])) walk(sub, `${at}/${k}/${pointer(name)}`);
    }
    for (const k of LIST) {
      if (!(k in s)) continue;
      if (!Array.isArray(s[k])) problems.push(`${at}/${k}: not a list of schemas`);
      else s[k].forEach((sub, i) => walk(sub, `${at}/${k}/${i}`));
    }
  };
  walk(doc, '');
  return problems;
}

/**
 * `args` as the server reads them: an explicit `null` for a property the schema does not require
 * means "absent", so it is dropped before checking the arguments against `inputSchema`.
 */
export function withoutOptionalNulls(args, inputSchema) {
  const required = new Set(inputSchema?.required ?? []);
  return Object.fromEntries(Object.entries(args).filter(([k, v]) => v !== null || required.has(k)));
}
