"""The rules every schema bridge serves must follow so that real MCP clients accept it (issue #6).

tests/ts/schema_rules.mjs states the same rules for the TypeScript test; keep the two in step.
"""

import re
from typing import Any

# `format` values defined by JSON Schema 2020-12.
STANDARD_FORMATS = {
    "date-time", "date", "time", "duration", "email", "idn-email", "hostname", "idn-hostname", "ipv4", "ipv6",
    "uri", "uri-reference", "iri", "iri-reference", "uuid", "uri-template", "json-pointer",
    "relative-json-pointer", "regex",
}  # fmt: skip
# Largest integer every JSON parser holds exactly: 2^53 - 1.
MAX_SAFE = 2**53 - 1
# Keywords whose value is one subschema, a map of subschemas, or a list of subschemas.
ONE = ["items", "additionalProperties", "not", "if", "then", "else", "contains", "propertyNames",
       "unevaluatedItems", "unevaluatedProperties", "additionalItems", "contentSchema"]  # fmt: skip
MAP = ["properties", "patternProperties", "$defs", "definitions", "dependentSchemas"]
LIST = ["allOf", "anyOf", "oneOf", "prefixItems"]
BOUNDS = ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"]
REF = re.compile(r"^#/(\$defs|definitions)/([^/]+)$")
# `"additionalProperties": false` is the one boolean every client understands (and some require).
FALSE_ALLOWED = re.compile(r"/(additionalProperties|unevaluatedProperties)$")


def _pointer(segment: str) -> str:
    return str(segment).replace("~", "~0").replace("/", "~1")


def schema_problems(doc: Any) -> list[str]:
    """Problems of one schema document (a tool's `inputSchema` or `outputSchema`), each as
    "<JSON pointer>: <what>"; empty when it follows every rule: root
    `{"type":"object","properties":{…}}` without `$schema`/`oneOf`/`anyOf`/`allOf`; definitions
    only at the root and every `$ref` a `#/$defs/<name>` that exists there (never `#`, which is the
    wrapper, not a type); no boolean schemas (but `"additionalProperties": false`); no type arrays;
    no `const`; standard `format`s only; no integer bound beyond ±(2^53 − 1)."""
    if not isinstance(doc, dict):
        return [f": not an object schema: {doc!r}"]
    problems: list[str] = []
    if doc.get("type") != "object":
        problems.append(f": root type is {doc.get('type')!r}, not 'object'")
    if not isinstance(doc.get("properties"), dict):
        problems.append(': root has no "properties" object')
    problems += [f": {k} at the root" for k in ("oneOf", "anyOf", "allOf") if k in doc]

    def walk(s: Any, at: str) -> None:
        here = at or "/"
        if isinstance(s, bool):
            if not (s is False and FALSE_ALLOWED.search(at)):
                problems.append(f"{here}: boolean schema {str(s).lower()}")
            return
        if not isinstance(s, dict):
            problems.append(f"{here}: not a schema: {s!r}")
            return
        if "$schema" in s:
            problems.append(f"{here}: $schema")
        if at and ("$defs" in s or "definitions" in s):
            problems.append(f"{here}: definitions below the document root")
        if isinstance(s.get("type"), list):
            problems.append(f"{here}: type array {s['type']!r}")
        if "const" in s:
            problems.append(f"{here}: const {s['const']!r}")
        if "format" in s and s["format"] not in STANDARD_FORMATS:
            problems.append(f"{here}: non-standard format {s['format']!r}")
        for b in BOUNDS:
            v = s.get(b)
            if isinstance(v, (int, float)) and not isinstance(v, bool) and abs(v) > MAX_SAFE:
                problems.append(f"{here}: {b} {v} beyond ±(2^53 − 1)")
        if "$ref" in s:
            ref = s["$ref"]
            m = REF.match(ref) if isinstance(ref, str) else None
            name = m and m.group(2).replace("~1", "/").replace("~0", "~")
            if ref == "#":
                problems.append(f'{here}: $ref "#" is the whole document, not a definition')
            elif not m or not isinstance(doc.get(m.group(1)), dict) or name not in doc[m.group(1)]:
                problems.append(f"{here}: $ref {ref!r} does not resolve to a definition at the document root")
        for k in ONE:
            if k in s:
                walk(s[k], f"{at}/{k}")
        for k in MAP:
            if k not in s:
                continue
            if not isinstance(s[k], dict):
                problems.append(f"{at}/{k}: not a map of schemas")
                continue
            for name, sub in s[k].items():
                walk(sub, f"{at}/{k}/{_pointer(name)}")
        for k in LIST:
            if k not in s:
                continue
            if not isinstance(s[k], list):
                problems.append(f"{at}/{k}: not a list of schemas")
                continue
            for i, sub in enumerate(s[k]):
                walk(sub, f"{at}/{k}/{i}")

    walk(doc, "")
    return problems


def without_optional_nulls(args: dict, input_schema: dict) -> dict:
    """`args` as the server reads them: an explicit `null` for a property the schema does not
    require means "absent", so it is dropped before checking the arguments against `inputSchema`."""
    required = set(input_schema.get("required", []))
    return {k: v for k, v in args.items() if v is not None or k in required}
