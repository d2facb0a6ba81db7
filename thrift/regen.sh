#!/usr/bin/env bash
# Regenerates the committed Rust code from the IDL:
#   idl/hbase.thrift  -> src/hbase.rs   (Thrift1, service Hbase)
#   idl/hbase2.thrift -> src/hbase2.rs  (Thrift2, service THBaseService)
# Each file is the output of `thrift --gen rs` 0.17.0 passed through
# codegen/patch_generated.py. Same inputs give the same bytes on every run.
#
# Usage: thrift/regen.sh [OUTPUT_DIR]   (default: thrift/src)
set -euo pipefail

crate_dir="$(cd "$(dirname "$0")" && pwd)"
out_dir="${1:-$crate_dir/src}"
required_version="0.17.0"

if ! command -v thrift >/dev/null 2>&1; then
    echo "regen.sh: the Thrift compiler is not installed." >&2
    echo "  Debian/Ubuntu: apt-get install thrift-compiler   (version $required_version)" >&2
    exit 1
fi
found_version="$(thrift --version | awk '{print $3}')"
if [ "$found_version" != "$required_version" ]; then
    echo "regen.sh: Thrift compiler $required_version required, found '$found_version'." >&2
    echo "  The committed code must come from one compiler version; install $required_version." >&2
    exit 1
fi
if ! command -v python3 >/dev/null 2>&1; then
    echo "regen.sh: python3 is required to post-process the generated code." >&2
    echo "  Debian/Ubuntu: apt-get install python3" >&2
    exit 1
fi

mkdir -p "$out_dir"
work_dir="$(mktemp -d)"
trap 'rm -rf "$work_dir"' EXIT

for idl in hbase hbase2; do
    thrift -out "$work_dir" --gen rs "$crate_dir/idl/$idl.thrift"
    thrift -out "$work_dir" --gen json "$crate_dir/idl/$idl.thrift"
    python3 "$crate_dir/codegen/patch_generated.py" \
        "$work_dir/$idl.json" "$work_dir/$idl.rs" "$out_dir/$idl.rs"
done
