#pragma once

// Where the decode kernel's lanes find the codes of a row of a tile (gpu_common/tile_format.hpp):
// plain arithmetic shared by the kernel (attention/tile_rows.cuh) and its host test, which checks
// it against BlockFormat::code_slot, the format's own definition.
//
// A key lane reads a row in slices of 32 channels, one load each (INT8: two); a value lane reads
// runs of 4 channels, one 32-bit word each. In every integer layout four consecutive channels'
// codes are the four bytes of one word, at one shift. FP16 rows are plain halves and need no
// map.

#include "cocktail/precision.hpp"
#include "gpu_common/tile_format.hpp"

namespace cocktail::gpu {

// The bytes of a row that hold slice `slice` (channels 32·slice .. 32·slice + 31): `bytes`
// bytes from `offset`. INT2 reads a whole 16-byte unit for each of its two slices (each byte
// holds codes of both), or the 8-byte half unit that ends a row of head_dim ≡ 32 (mod 64).
struct SliceLoad {
  int offset = 0;
  int bytes = 0;
};

COCKTAIL_HOST_DEVICE constexpr SliceLoad slice_load(Precision p, int head_dim, int slice) {
  switch (p) {
    case Precision::fp16:
      return {64 * slice, 64};
    case Precision::int8:
      return {32 * slice, 32};
    case Precision::nf4:
    case Precision::int4:
      return {16 * slice, 16};
    case Precision::int2:
      break;
  }
  const int unit = slice / 2;
  return {kUnitBytes * unit, unit < head_dim / 64 ? kUnitBytes : kUnitBytes / 2};
}

// The planes of the slice's load that hold its codes: `count` of them from `first` (plane m is
// bits [m·bits, (m+1)·bits) of each byte).
struct PlaneSpan {
  int first = 0;
  int count = 1;
};

COCKTAIL_HOST_DEVICE constexpr PlaneSpan slice_planes(Precision p, int head_dim, int slice) {
  switch (p) {
    case Precision::fp16:
    case Precision::int8:
      return {0, 1};
    case Precision::nf4:
    case Precision::int4:
      return {0, 2};
    case Precision::int2:
      break;
  }
  if (slice / 2 < head_dim / 64) return {2 * (slice % 2), 2};
  return {0, 4};
}

// The first of the four channels held by 32-bit word `word` of the slice's load in plane
// `plane`: its byte i holds channel slice_channel(...) + i.
COCKTAIL_HOST_DEVICE constexpr int slice_channel(Precision p, int head_dim, int slice, int word,
                                                 int plane) {
  const int first = 32 * slice;
  switch (p) {
    case Precision::fp16:
    case Precision::int8:
      return first + 4 * word;
    case Precision::nf4:
    case Precision::int4:
      return first + 4 * word + 16 * plane;  // byte j: channels j and j + 16
    case Precision::int2:
      break;
  }
  if (slice / 2 < head_dim / 64) {
    // Byte j of the unit holds channels 64u + j + 16m: slice 2u + h is planes 2h and 2h + 1.
    return 64 * (slice / 2) + 4 * word + 16 * plane;
  }
  return first + 4 * word + 8 * plane;  // the half unit: byte j holds channels j + 8m
}

// Where a value lane finds channels 4·run .. 4·run + 3 of a row: the 32-bit word at `byte`,
// whose byte i shifted right by `shift` (and masked to the precision's bits) is channel
// 4·run + i's code. FP16 runs are the 8 bytes at 8·run.
struct RunWord {
  int byte = 0;
  int shift = 0;
};

COCKTAIL_HOST_DEVICE constexpr RunWord run_word(Precision p, int head_dim, int run) {
  switch (p) {
    case Precision::fp16:
      return {8 * run, 0};
    case Precision::int8:
      return {4 * run, 0};
    case Precision::nf4:
    case Precision::int4: {
      // Unit run / 8 holds 32 channels; its word r % 4 holds channels 4r.. in the low nibbles
      // (r < 4) or 4(r - 4) + 16.. in the high ones.
      const int r = run % 8;
      return {kUnitBytes * (run / 8) + 4 * (r % 4), 4 * (r / 4)};
    }
    case Precision::int2:
      break;
  }
  const int full_units = head_dim / 64;
  if (run < 16 * full_units) {
    const int r = run % 16;  // channels 64u + 4r + i = 64u + j + 16m
    return {kUnitBytes * (run / 16) + 4 * (r % 4), 2 * (r / 4)};
  }
  const int c = 4 * run - 64 * full_units;  // in the half unit: channels c + i = j + 8m
  return {kUnitBytes * full_units + 4 * ((c / 4) % 2), 2 * (c / 8)};
}

}  // namespace cocktail::gpu
