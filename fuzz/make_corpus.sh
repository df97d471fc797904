#!/bin/sh
# Seeds the libFuzzer corpora: make_corpus.sh DIR fills DIR/fuzz_program,
# DIR/fuzz_npy and DIR/fuzz_plugin_table (existing files are kept, so a
# corpus grown by earlier runs survives).
#   fuzz_program:      every chunk of ../shared/stablehlo/interpret/*.mlir
#                      (split at "// -----") and examples/*.mlir
#   fuzz_npy:          valid .npy files of several dtypes and shapes, and
#                      broken ones (truncated, bad magic, bad header)
#   fuzz_plugin_table: an all-working table and a few mixed ones
#   fuzz_pjrt_table:   the same for PJRT tables
#   fuzz_bytecode:     the portable artifacts of ../shared/stablehlo/vhlo
#                      (*.mlir.bc)
#   fuzz_cache_file:   real cache files (intact, flipped, truncated, with
#                      and without a resealed checksum), written by the
#                      target itself, found next to DIR (make fuzz first)
set -eu
out=${1:-build-fuzz/corpus}
root=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out/fuzz_program" "$out/fuzz_npy" "$out/fuzz_plugin_table"

# ---- programs ----
for f in "$root"/../shared/stablehlo/interpret/*.mlir "$root"/examples/*.mlir; do
  [ -f "$f" ] || continue
  base=$(basename "$f" .mlir)
  awk -v dir="$out/fuzz_program" -v base="$base" '
    BEGIN { n = 0; file = sprintf("%s/%s-%03d.mlir", dir, base, n) }
    /^\/\/ -----/ { close(file); n++; file = sprintf("%s/%s-%03d.mlir", dir, base, n); next }
    { print > file }
  ' "$f"
done

# ---- .npy files: header "\x93NUMPY" 1 0, little-endian u16 length, a
# dict padded with spaces to a multiple of 64 bytes ending in "\n" ----
npy() { # name descr shape data-bytes (printf format of the payload)
  name=$1 descr=$2 shape=$3 payload=$4 order=${5:-False}
  dict="{'descr': '$descr', 'fortran_order': $order, 'shape': $shape, }"
  len=$(( ${#dict} + 1 ))
  total=$(( (10 + len + 63) / 64 * 64 ))
  hlen=$(( total - 10 ))
  pad=$(( hlen - len ))
  {
    printf '\223NUMPY\001\000'
    printf "\\$(printf %03o $((hlen % 256)))\\$(printf %03o $((hlen / 256)))"
    printf '%s' "$dict"
    printf "%${pad}s" ''
    printf '\n'
    printf "$payload"
  } > "$out/fuzz_npy/$name"
}
npy f32_2x2.npy '<f4' '(2, 2)' '\000\000\200\077\000\000\000\100\000\000\100\100\000\000\200\100'
npy i32_3.npy '<i4' '(3,)' '\001\000\000\000\002\000\000\000\377\377\377\377'
npy f64_scalar.npy '<f8' '()' '\000\000\000\000\000\000\360\077'
npy bool_4.npy '|b1' '(4,)' '\001\000\001\001'
npy u8_2x3.npy '|u1' '(2, 3)' '\001\002\003\004\005\006'
npy f16_2.npy '<f2' '(2,)' '\000\074\000\100'
npy c64_1.npy '<c8' '(1,)' '\000\000\200\077\000\000\000\100'
npy i64_0.npy '<i8' '(0,)' ''
npy big_endian.npy '>f4' '(1,)' '\077\200\000\000'
npy fortran.npy '<f4' '(1, 1)' '\000\000\200\077' True
npy truncated.npy '<f4' '(4,)' '\000\000\200\077'
npy bad_shape.npy '<f4' '(-1, 2)' ''
npy huge_shape.npy '<f4' '(1000000000, 1000000000)' ''
npy bad_descr.npy 'zz' '(1,)' '\000'
printf '\223NUMPX\001\000\000\000' > "$out/fuzz_npy/bad_magic.npy"
printf '\223NUMPY\001\000\377\377{' > "$out/fuzz_npy/bad_len.npy"
printf '' > "$out/fuzz_npy/empty.npy"

# ---- plugin tables: one byte per choice, 0 = the working entry ----
printf '\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000' \
  > "$out/fuzz_plugin_table/all_working"
printf '\001\000\000\000\004\000\001\003\000\000\000\000\002\000\000\000\000\000\000\000\000\000\002\002\002\002\002\002' \
  > "$out/fuzz_plugin_table/mixed_bad"
printf '\000\000\000\000\000\000\000\005\000\000\000\002\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000' \
  > "$out/fuzz_plugin_table/bad_describe"
printf '\000\003\000\000\000\000' > "$out/fuzz_plugin_table/zero_size"
printf '\000\000\002\000\000\000' > "$out/fuzz_plugin_table/bad_major"
# ---- PJRT tables (fuzz_pjrt_table): devices-1, error code, major,
# minor, struct_size, then one byte per function (0 = working) ----
mkdir -p "$out/fuzz_pjrt_table"
printf '\002\000\000\074\000' > "$out/fuzz_pjrt_table/all_working"
printf '\001\001\000\074\000\000\003\000\000\003\000\000\000\000\003\003\000\003\000\000\003' \
  > "$out/fuzz_pjrt_table/lies"
printf '\002\002\000\074\000\002\002\000\000\000\000\000\002\002\002\002\002\002\002\002\002\002' \
  > "$out/fuzz_pjrt_table/failures"
printf '\000\000\001\000\000' > "$out/fuzz_pjrt_table/bad_major"
printf '\000\000\000\074\002' > "$out/fuzz_pjrt_table/small"
# ---- portable artifacts ----
mkdir -p "$out/fuzz_bytecode"
for f in "$root"/../shared/stablehlo/vhlo/*.mlir.bc; do
  [ -f "$f" ] && cp "$f" "$out/fuzz_bytecode/"
done
# ---- cache files: the target compiles its program and writes them ----
mkdir -p "$out/fuzz_cache_file"
cache_bin=$(dirname "$out")/fuzz_cache_file
if [ -x "$cache_bin" ]; then
  XRT_FUZZ_WRITE_SEEDS="$out/fuzz_cache_file" "$cache_bin" -runs=0 \
    >/dev/null 2>&1 || echo "make_corpus.sh: $cache_bin could not write seeds"
else
  echo "make_corpus.sh: no $cache_bin yet (make fuzz): no cache file seeds"
fi
echo "make_corpus.sh: $(ls "$out/fuzz_program" | wc -l) programs," \
  "$(ls "$out/fuzz_npy" | wc -l) .npy files," \
  "$(ls "$out/fuzz_plugin_table" | wc -l) plugin tables," \
  "$(ls "$out/fuzz_cache_file" | wc -l) cache files in $out"
