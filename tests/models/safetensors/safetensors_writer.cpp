#include "safetensors_writer.hpp"

#include <cstring>
#include <nlohmann/json.hpp>

namespace cocktail::testing {

Bytes safetensors_raw(std::string_view header, const Bytes& data) {
  std::string padded(header);
  padded.resize((padded.size() + 7) / 8 * 8, ' ');
  Bytes out(8);
  put_u64(out, 0, padded.size());
  for (const char c : padded) out.push_back(std::byte(c));
  out.insert(out.end(), data.begin(), data.end());
  return out;
}

Bytes safetensors_file(const std::vector<SafetensorsEntry>& entries,
                       const std::map<std::string, std::string>& metadata) {
  nlohmann::json header = nlohmann::json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  Bytes data;
  for (const SafetensorsEntry& e : entries) {
    header[e.name] = {{"dtype", e.dtype},
                      {"shape", e.shape},
                      {"data_offsets", {data.size(), data.size() + e.data.size()}}};
    data.insert(data.end(), e.data.begin(), e.data.end());
  }
  return safetensors_raw(header.dump(), data);
}

Bytes f32_bytes(std::span<const float> values) {
  Bytes out(values.size() * sizeof(float));
  std::memcpy(out.data(), values.data(), out.size());
  return out;
}

}  // namespace cocktail::testing
