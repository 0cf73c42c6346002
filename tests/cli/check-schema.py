#!/usr/bin/env python3
# tests/cli/check-schema.py -- validates JSON against docs/schema/*.json.
#
# Usage: check-schema.py SCHEMA.json [FILE]   (FILE default: stdin)
# Implements the JSON Schema subset the protocol's schemas use (type,
# enum, properties, required, additionalProperties: false, items,
# minimum, maximum) with the standard library only, so make check needs
# no pip packages.  Prints every violation with its JSON path; exit 0
# valid, 1 invalid, 99 unusable input.
import json
import sys

TYPES = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "null": lambda v: v is None,
}


def check(schema, value, path, errors):
    t = schema.get("type")
    if t is not None:
        ts = t if isinstance(t, list) else [t]
        if not any(TYPES[x](value) for x in ts):
            errors.append("%s: %r is not of type %s" % (path, value, t))
            return
    if "enum" in schema and value not in schema["enum"]:
        errors.append("%s: %r is not one of %s" % (path, value, schema["enum"]))
    if "minimum" in schema and TYPES["number"](value) and value < schema["minimum"]:
        errors.append("%s: %r is below %r" % (path, value, schema["minimum"]))
    if "maximum" in schema and TYPES["number"](value) and value > schema["maximum"]:
        errors.append("%s: %r is above %r" % (path, value, schema["maximum"]))
    if isinstance(value, dict):
        props = schema.get("properties", {})
        for k in schema.get("required", []):
            if k not in value:
                errors.append("%s: missing required field '%s'" % (path, k))
        for k, v in value.items():
            if k in props:
                check(props[k], v, "%s.%s" % (path, k), errors)
            elif schema.get("additionalProperties") is False:
                errors.append("%s: unexpected field '%s'" % (path, k))
    if isinstance(value, list) and "items" in schema:
        for i, v in enumerate(value):
            check(schema["items"], v, "%s[%d]" % (path, i), errors)


def main():
    if len(sys.argv) not in (2, 3):
        print("usage: check-schema.py SCHEMA [FILE]", file=sys.stderr)
        return 99
    try:
        with open(sys.argv[1]) as f:
            schema = json.load(f)
        text = open(sys.argv[2]).read() if len(sys.argv) == 3 else sys.stdin.read()
        value = json.loads(text)
    except (OSError, ValueError) as e:
        print("check-schema: %s" % e, file=sys.stderr)
        return 1
    errors = []
    check(schema, value, "$", errors)
    for e in errors:
        print("check-schema: %s: %s" % (sys.argv[1], e), file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
