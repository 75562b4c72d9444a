#pragma once

#include <cstddef>
#include <string_view>

namespace cocktail::models {
class LlamaModel;
struct Question;
}  // namespace cocktail::models

namespace cocktail::cli {

// Bytes a new allocation can have now: MemAvailable of /proc/meminfo (free memory plus the
// caches the kernel can drop).
std::size_t available_memory_bytes();

// Refuses up front what the OOM killer would stop later: throws Error "<what> needs N bytes
// (X GiB), this machine has Y available" when `bytes` exceed the available memory.
void require_memory(std::size_t bytes, std::string_view what);

// The KV cache is what grows with the context: `caches` caches of the question's prompt and
// answer are refused before prefill fills them when this machine cannot hold them at FP16 (as
// prefill stores them).
void require_kv_cache_memory(const models::LlamaModel& model, const models::Question& question,
                             int caches);

}  // namespace cocktail::cli
