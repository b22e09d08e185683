#!/bin/sh
# Fills fuzz/corpus/<target>/ with seeds: the repository's own request files (fixtures, demo
# requests, black-box test data, the hostile corpus) and the small outcome files in fuzz/seeds/outcome/. The
# corpus directories are not committed; run this once before the first `cargo fuzz run`.
set -eu
fuzz=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$fuzz")
mkdir -p "$fuzz/corpus/request" "$fuzz/corpus/outcome"
for file in "$root"/tests/data/*.json "$root"/tests/data/hostile/* \
    "$root"/crates/engine/demo/*.json "$root"/crates/protocol/tests/data/requests/*.json; do
    case $file in *.out.json | */verdicts.json) continue ;; esac
    # The hostile corpus's outcomes/ is a folder of outcome cases, not a request.
    [ -f "$file" ] || continue
    cp "$file" "$fuzz/corpus/request/$(basename "$(dirname "$file")")-$(basename "$file")"
done
cp "$fuzz"/seeds/outcome/*.json "$fuzz/corpus/outcome/"
echo "seeded $(ls "$fuzz/corpus/request" | wc -l) requests, $(ls "$fuzz/corpus/outcome" | wc -l) outcomes"
