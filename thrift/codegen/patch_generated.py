#!/usr/bin/env python3
"""Apply Tabula's fixed set of edits to Rust code emitted by `thrift --gen rs` 0.17.

Usage: patch_generated.py MODEL.json INPUT.rs OUTPUT.rs

MODEL.json is the same IDL compiled with `thrift --gen json`; it supplies the
requiredness and default value of every service argument, which the Rust output
no longer carries. The edits, each checked to apply exactly where expected (any
mismatch aborts, so a changed compiler cannot slip through silently):

1. Absent arguments. The Rust generator treats every argument as required and
   fails the call when a client omits one. Arguments the IDL does not mark
   `required` are instead filled with their IDL default, else the type's empty
   value (empty bytes, string, list, map or set, 0, false), as HBase's Java
   server does with a null argument. An absent struct argument is decoded as an
   empty struct, so one with `required` fields still fails with PROTOCOL_ERROR.
2. Unknown methods. The generated processor answers an unknown method without
   consuming its arguments, which desynchronises the connection. The arguments
   are now skipped first, and the message text is HBase's
   "Invalid method name: '<name>'".
3. Undecodable arguments are answered with TApplicationException type
   PROTOCOL_ERROR instead of UNKNOWN.
4. Unknown fields are skipped with `crate::wire::skip_value`, which does not
   insist that skipped strings be UTF-8.

The output depends only on the two inputs, so regeneration is byte-for-byte
reproducible.
"""

import json
import re
import sys

EXPECT = '.expect("auto-generated code should have checked for presence of required fields")'

HEADER_NOTE = (
    "// Post-processed by thrift/codegen/patch_generated.py (see thrift/README.md):\n"
    "// absent non-required arguments take their IDL default or empty value, unknown\n"
    "// methods are skipped and answered with UNKNOWN_METHOD, undecodable arguments\n"
    "// are answered with PROTOCOL_ERROR, unknown fields are skipped byte-safely.\n"
)

UNKNOWN_METHOD_ARM = """      method => {
        Err(
          thrift::Error::Application(
            ApplicationError::new(
              ApplicationErrorKind::UnknownMethod,
              format!("unknown method {}", method)
            )
          )
        )
      },
"""

UNKNOWN_METHOD_ARM_PATCHED = """      method => {
        crate::wire::skip_message_body(i_prot)?;
        Err(
          thrift::Error::Application(
            ApplicationError::new(
              ApplicationErrorKind::UnknownMethod,
              format!("Invalid method name: '{}'", method)
            )
          )
        )
      },
"""


class PatchError(Exception):
    """The generated code does not have the shape this script expects."""


def replace_exactly(text, old, new, count, what):
    found = text.count(old)
    if found != count:
        raise PatchError(f"{what}: expected {count} occurrence(s), found {found}")
    return text.replace(old, new)


def rust_literal(value, type_id, what):
    if type_id == "bool" and isinstance(value, bool):
        return "true" if value else "false"
    if type_id in ("i8", "i16", "i32", "i64") and isinstance(value, int):
        return str(value)
    raise PatchError(f"{what}: no Rust rendering for default {value!r} of type {type_id}")


def args_reader_block(text, struct_name):
    start_marker = f"impl {struct_name} {{\n  fn read_from_in_protocol("
    start = text.find(start_marker)
    if start < 0 or text.find(start_marker, start + 1) >= 0:
        raise PatchError(f"{struct_name}: reader not found exactly once")
    end = text.find("\n}\n", start)
    if end < 0:
        raise PatchError(f"{struct_name}: end of reader not found")
    return start, end


def relax_arguments(text, model):
    for service in model["services"]:
        for function in service["functions"]:
            name = function["name"]
            struct_name = f"{service['name']}{name[0].upper()}{name[1:]}Args"
            for arg in function["arguments"]:
                if arg["required"] == "required":
                    continue
                what = f"{service['name']}.{name}({arg['name']})"
                type_id = arg["typeId"]
                value = f"f_{arg['key']}"
                if type_id in ("struct", "union", "exception"):
                    class_name = arg["type"]["class"]
                    fallback = (
                        f"match {value} {{ Some(value) => value, "
                        f"None => crate::wire::decode_empty_struct::<{class_name}>()? }}"
                    )
                elif "default" in arg:
                    fallback = f"{value}.unwrap_or({rust_literal(arg['default'], type_id, what)})"
                else:
                    fallback = f"{value}.unwrap_or_default()"
                start, end = args_reader_block(text, struct_name)
                block = text[start:end]
                verify = re.compile(
                    r'    verify_required_field_exists\("%s\.(\w+)", &f_%d\)\?;\n'
                    % (re.escape(struct_name), arg["key"])
                )
                matches = verify.findall(block)
                if len(matches) != 1:
                    raise PatchError(f"{what}: presence check found {len(matches)} times")
                field = matches[0]
                block = verify.sub("", block)
                block = replace_exactly(
                    block,
                    f"      {field}: {value}{EXPECT},\n",
                    f"      {field}: {fallback},\n",
                    1,
                    what,
                )
                text = text[:start] + block + text[end:]
    return text


def patch(text, model):
    first_lines = "// DO NOT EDIT UNLESS YOU ARE SURE THAT YOU KNOW WHAT YOU ARE DOING\n"
    text = replace_exactly(text, first_lines, first_lines + HEADER_NOTE, 1, "header")
    text = relax_arguments(text, model)
    services = len(model["services"])
    text = replace_exactly(
        text, UNKNOWN_METHOD_ARM, UNKNOWN_METHOD_ARM_PATCHED, services, "unknown method arm"
    )
    text, decode_sites = re.subn(
        r"(let (?:args|_) = \w+Args::read_from_in_protocol\(i_prot\))\?;",
        r"\1.map_err(crate::wire::args_decode_error)?;",
        text,
    )
    functions = sum(len(service["functions"]) for service in model["services"])
    if decode_sites != functions:
        raise PatchError(f"argument readers: expected {functions}, found {decode_sites}")
    skip_old = "i_prot.skip(field_ident.field_type)?;"
    if text.count(skip_old) == 0:
        raise PatchError("unknown-field skips: none found")
    text = text.replace(skip_old, "crate::wire::skip_value(i_prot, field_ident.field_type)?;")
    return text


def main(argv):
    if len(argv) != 4:
        sys.stderr.write(__doc__)
        return 2
    model_path, input_path, output_path = argv[1:]
    with open(model_path, encoding="utf-8") as model_file:
        model = json.load(model_file)
    with open(input_path, encoding="utf-8", newline="") as input_file:
        text = input_file.read()
    try:
        text = patch(text, model)
    except PatchError as error:
        sys.stderr.write(f"patch_generated.py: {input_path}: {error}\n")
        return 1
    with open(output_path, "w", encoding="utf-8", newline="") as output_file:
        output_file.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
