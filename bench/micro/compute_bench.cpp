// Matmul throughput of the CPU backend on SmolLM2-135M's weight shapes, for decode (one token)
// and prefill (512 tokens), per activation mode. Weights are random blocks of the real formats.
//
//   build/release/bin/cocktail_compute_bench --benchmark_filter=decode [--simd=AVX2]
//
// --simd=TARGET runs every kernel on that Highway target (select_simd_target), as an
// AVX2-only CPU would.
//
// bytes_per_second is the weight bytes streamed per call; items_per_second is multiply-adds.
// Decode cases ending in /row_groups read the weights through the row-group copy CpuCompute::upload
// makes.

#include <benchmark/benchmark.h>

#include <bit>
#include <cstddef>
#include <iostream>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "attention/tile_kernels.hpp"
#include "cocktail/tensor_type.hpp"
#include "compute/cpu_compute.hpp"
#include "simd_target.hpp"

namespace cocktail::cpu {
namespace {

// Random blocks with small positive scales, as quantized weights have.
std::vector<std::byte> random_weights(TensorType type, std::int64_t rows, std::int64_t cols) {
  std::mt19937 rng(42);
  std::vector<std::byte> bytes(row_bytes(type, cols) * std::size_t(rows));
  for (std::byte& b : bytes) b = std::byte(rng() & 0xFF);
  const TensorTypeInfo ti = info(type);
  const auto scale = std::bit_cast<std::uint16_t>(static_cast<_Float16>(0.01f));
  for (std::size_t at = 0; at < bytes.size(); at += ti.block_bytes) {
    bytes[at] = std::byte(scale & 0xFF);
    bytes[at + 1] = std::byte(scale >> 8);
    if (type == TensorType::q4_1) {  // offset: -8 scales
      const auto offset = std::bit_cast<std::uint16_t>(static_cast<_Float16>(-0.08f));
      bytes[at + 2] = std::byte(offset & 0xFF);
      bytes[at + 3] = std::byte(offset >> 8);
    }
  }
  return bytes;
}

struct Shape {
  const char* name;
  TensorType type;
  std::int64_t rows, cols;
};

// SmolLM2-135M: 576 wide, 3 KV heads of 64, an FFN of 1536, a 49152-token tied output (Q8_0).
constexpr Shape kShapes[] = {
    {"attn_q", TensorType::q4_1, 576, 576},   {"attn_k", TensorType::q4_1, 192, 576},
    {"ffn_up", TensorType::q4_1, 1536, 576},  {"ffn_down", TensorType::q4_1, 576, 1536},
    {"output", TensorType::q8_0, 49152, 576},
};

constexpr const char* kActivationNames[] = {"int8", "int16", "f32"};

// Reads a buffer twice the L3 of the machines we measure on, so the next matmul's weights come
// from DRAM, as in a decode step (where the other layers' weights evict them).
void evict_caches() {
  static std::vector<std::uint8_t> big(std::size_t(64) << 20, 1);
  std::uint8_t sum = 0;
  for (std::size_t at = 0; at < big.size(); at += 64) sum = std::uint8_t(sum + big[at]);
  big[0] = sum;
}

// With `from_dram`, each call's weights are evicted from the caches first (untimed).
void matmul(benchmark::State& state, Shape shape, std::int64_t tokens,
            MatmulActivations activations, bool from_dram, bool prepared) {
  const auto weights = random_weights(shape.type, shape.rows, shape.cols);
  // With `prepared`, upload makes the row-group copy where the GEMV reads one.
  CpuCompute compute(0, activations, prepared);
  const std::unique_ptr<CpuWeights> w =
      compute.upload_matrix({shape.type, weights.data(), shape.rows, shape.cols});
  std::vector<float> x(std::size_t(tokens * shape.cols));
  std::mt19937 rng(7);
  std::normal_distribution<float> normal;
  for (float& v : x) v = normal(rng);
  std::vector<float> y(std::size_t(tokens * shape.rows));
  for (auto _ : state) {
    if (from_dram) {
      state.PauseTiming();
      evict_caches();
      state.ResumeTiming();
    }
    compute.matmul(*w, x, tokens, y);
    benchmark::DoNotOptimize(y.data());
  }
  state.SetBytesProcessed(std::int64_t(state.iterations()) * std::int64_t(weights.size()));
  state.SetItemsProcessed(std::int64_t(state.iterations()) * tokens * shape.rows * shape.cols);
}

// The matmuls of one decode step through every layer of the model (30 layers), as one figure.
// With `shared_input`, q, k and v, and gate and up, go as one matmul_shared_input call each, as
// the model runs them; without, every matrix is its own matmul call.
void decode_layers(benchmark::State& state, MatmulActivations activations, bool shared_input,
                   bool prepared) {
  constexpr int kLayers = 30;
  CpuCompute compute(0, activations, prepared);
  std::vector<std::vector<std::byte>> bytes;
  std::vector<std::unique_ptr<CpuWeights>> matrices;
  const std::int64_t shapes[][2] = {{576, 576},  {192, 576},  {192, 576}, {576, 576},
                                    {1536, 576}, {1536, 576}, {576, 1536}};
  std::size_t total = 0;
  for (int l = 0; l < kLayers; ++l) {
    for (const auto& s : shapes) {
      bytes.push_back(random_weights(TensorType::q4_1, s[0], s[1]));
      total += bytes.back().size();
      matrices.push_back(
          compute.upload_matrix({TensorType::q4_1, bytes.back().data(), s[0], s[1]}));
    }
  }
  std::vector<float> x(1536, 0.5f), y(2 * 1536);
  // Runs of matrices that share an input: [first, last) of a layer's 7.
  const int runs[][2] = {{0, 3}, {3, 4}, {4, 6}, {6, 7}};
  std::vector<HostMatmulOutput> outputs;
  for (auto _ : state) {
    for (int l = 0; l < kLayers; ++l) {
      for (const auto& run : runs) {
        outputs.clear();
        std::size_t used = 0;
        for (int i = run[0]; i < run[1]; ++i) {
          const CpuWeights* w = matrices[std::size_t(l * 7 + i)].get();
          outputs.push_back({w, std::span<float>(y).subspan(used, std::size_t(w->rows()))});
          used += std::size_t(w->rows());
        }
        const auto in = std::span<const float>(x).first(std::size_t(outputs[0].w->cols()));
        if (shared_input) {
          compute.matmul_shared_input(in, 1, outputs);
        } else {
          for (const HostMatmulOutput& out : outputs) compute.matmul(*out.w, in, 1, out.y);
        }
      }
    }
    benchmark::DoNotOptimize(y.data());
  }
  state.SetBytesProcessed(std::int64_t(state.iterations()) * std::int64_t(total));
}

void register_all() {
  for (int a = 0; a < 3; ++a) {
    const auto activations = MatmulActivations(a);
    for (const Shape& s : kShapes) {
      for (const std::int64_t tokens : {1, 512}) {
        if (tokens > 1 && s.rows > 4096) continue;  // prefill only needs the last token's logits
        const std::string name =
            std::string(tokens == 1 ? "decode/" : "prefill/") + s.name + "/" + kActivationNames[a];
        for (const bool prepared : {false, true}) {
          if (prepared && (tokens > 1 || activations == MatmulActivations::f32)) continue;
          const std::string case_name = name + (prepared ? "/row_groups" : "");
          benchmark::RegisterBenchmark(case_name.c_str(), matmul, s, tokens, activations, false,
                                       prepared)
              ->Unit(benchmark::kMicrosecond)
              ->UseRealTime();
          if (tokens == 1) {
            benchmark::RegisterBenchmark((case_name + "/from_dram").c_str(), matmul, s, tokens,
                                         activations, true, prepared)
                ->MinTime(0.02)  // of timed time: the eviction between calls takes longer
                ->Unit(benchmark::kMicrosecond)
                ->UseRealTime();
          }
        }
      }
    }
    for (const bool shared_input : {false, true}) {
      for (const bool prepared : {false, true}) {
        if (prepared && activations == MatmulActivations::f32) continue;
        const std::string name = std::string("decode/all_layers") +
                                 (shared_input ? "_shared_input/" : "/") + kActivationNames[a] +
                                 (prepared ? "/row_groups" : "");
        benchmark::RegisterBenchmark(name.c_str(), decode_layers, activations, shared_input,
                                     prepared)
            ->Unit(benchmark::kMillisecond)
            ->UseRealTime();
      }
    }
  }
}

}  // namespace
}  // namespace cocktail::cpu

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  const std::string simd_flag = "--simd=";
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind(simd_flag, 0) != 0) {
      std::cerr << "unknown argument " << arg << "\n";
      return 2;
    }
    try {
      cocktail::cpu::select_simd_target(arg.substr(simd_flag.size()));
    } catch (const std::exception& e) {
      std::cerr << arg << ": " << e.what() << "\n";
      return 2;
    }
  }
  benchmark::AddCustomContext("simd_target", cocktail::cpu::simd_target_name());
  cocktail::cpu::register_all();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
