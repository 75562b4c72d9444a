#pragma once

// The commit's one kernel: every destination tile of every layer × KV head gathered from the
// FP16 tail or the previous commit's tiles and quantized into the new segment block
// (kv/store_view.hpp's layout), by the host's GatherTable.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "cocktail/gather_table.hpp"
#include "cocktail/precision.hpp"
#include "cocktail/quant_spec.hpp"
#include "gpu_common/tile_format.hpp"
#include "quant/quantize_fault.hpp"
#include "vendor/gpu_runtime.hpp"

namespace cocktail::gpu {

inline constexpr std::size_t kPrecisions = kAllPrecisions.size();

// One destination tile of GatherTable, as the kernel reads it.
struct DeviceGatherTile {
  std::int64_t first_position = 0;
  // from_tail: the tail row of the tile's first token; else the tile of the previous commit's
  // segment of source_precision.
  std::int64_t source_index = 0;
  int index = 0;  // in its new segment
  int valid = 0;
  Precision precision = Precision::fp16;  // of its new segment
  Precision source_precision = Precision::fp16;
  bool from_tail = true;
};

// The table the kernel reads: `table`'s tiles in storage order (precision by precision).
inline std::vector<DeviceGatherTile> device_table(const GatherTable& table) {
  std::vector<DeviceGatherTile> out;
  for (Precision p : kAllPrecisions) {
    int index = 0;
    for (const GatherTile& t : table.segment(p)) {
      out.push_back({t.first_position, t.source.index, index++, t.valid, p, t.source.precision,
                     t.source.place == GatherSource::Place::tail});
    }
  }
  return out;
}

// A block of segments: each precision's tiles of head h at base + h · n_tiles · format.bytes().
struct SegmentBlock {
  std::byte* base[kPrecisions] = {};
  int n_tiles[kPrecisions] = {};
};

struct CommitArgs {
  TileFormat formats[kPrecisions];
  RangeFit range = RangeFit::min_max;
  SegmentBlock to;
  SegmentBlock from;  // the previous commit's (its bases read only)
  const __half* tail_keys = nullptr;
  const __half* tail_values = nullptr;
  std::int64_t tail_capacity = 0;
  const DeviceGatherTile* table = nullptr;
  QuantizeFault* fault = nullptr;
};

// A fault's site in a commit: head (layer · n_kv_heads + kv_head), original position, part
// (0 keys, 1 values) and channel, ordered so that the lowest site is the first head's first
// position. Positions below 2^31, heads and channels below 2^16.
struct CommitSite {
  int head = 0;
  std::int64_t position = 0;
  int part = 0;
  int channel = 0;
};

COCKTAIL_HOST_DEVICE constexpr unsigned long long commit_site(const CommitSite& s) {
  return (static_cast<unsigned long long>(s.head) << 48) |
         (static_cast<unsigned long long>(s.position) << 17) |
         (static_cast<unsigned long long>(s.part) << 16) |
         static_cast<unsigned long long>(s.channel);
}

COCKTAIL_HOST_DEVICE constexpr CommitSite commit_site_of(unsigned long long site) {
  return {int(site >> 48), std::int64_t((site >> 17) & 0x7fffffffull), int((site >> 16) & 1u),
          int(site & 0xffffull)};
}

// Launches the gather over n_table tiles × n_heads heads. The new block's bytes are zeroed.
void launch_commit(cudaStream_t stream, const CommitArgs& args, int n_table, int n_heads);

}  // namespace cocktail::gpu
