#include <algorithm>
#include <array>
#include <string>

#include "cocktail/compute_checks.hpp"
#include "cocktail/error.hpp"
#include "compute/elementwise_kernels.cuh"
#include "compute/encoder_attention_kernels.cuh"
#include "compute/encoder_tiles.hpp"
#include "compute/gpu_compute.hpp"
#include "compute/gpu_weights.hpp"
#include "compute/matmul_kernels.cuh"
#include "compute/norm_kernels.cuh"
#include "runtime/gpu_buffer.hpp"
#include "runtime/gpu_stream.hpp"

namespace cocktail::gpu {

namespace {

const float* floats_in(const char* op, const char* operand, const Tensor& t) {
  return device_pointer<const float>(op, operand, t);
}

float* floats_out(const char* op, const char* operand, const Tensor& t) {
  return device_pointer<float>(op, operand, t);
}

const int* ints_in(const char* op, const char* operand, const Tensor& t) {
  return device_pointer<const int>(op, operand, t);
}

}  // namespace

GpuCompute::GpuCompute(std::shared_ptr<const GpuDevice> device) : device_(std::move(device)) {}

std::unique_ptr<Weights> GpuCompute::upload(const WeightView& w) {
  check_weight_view("upload", w);
  use_device(*device_);
  return std::make_unique<GpuWeights>(w, device_->index, this);
}

const GpuWeights& GpuCompute::own(const char* op, const Weights& w) const {
  const auto* mine = dynamic_cast<const GpuWeights*>(&w);
  // The maker, not the type alone: the HIP plugin's GpuWeights has the same name.
  if (mine == nullptr || mine->maker() != this) {
    throw Error(std::string(op) + ": the " + std::to_string(w.rows()) + " x " +
                std::to_string(w.cols()) +
                " weights were uploaded by another Compute; upload them with this one");
  }
  return *mine;
}

void GpuCompute::matmul(Stream& stream, const Weights& w, const Tensor& x, const Tensor& y) {
  use_device(*device_);
  const GpuWeights& mine = own("matmul", w);
  check_matmul("matmul", w, x, y);
  const MatmulTarget target{mine.rows_view(), floats_out("matmul", "y", y)};
  launch_matmul(native_stream("matmul", stream), std::span(&target, 1), floats_in("matmul", "x", x),
                x.rows);
}

// At decode, the outputs of one format share a GEMV launch, kMaxGemvTargets at a time.
void GpuCompute::matmul_shared_input(Stream& stream, const Tensor& x,
                                     std::span<const MatmulOutput> outputs) {
  use_device(*device_);
  constexpr const char* op = "matmul_shared_input";
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    try {  // every operand before the first launch
      own(op, *outputs[i].w);
      check_matmul(op, *outputs[i].w, x, outputs[i].y);
      floats_out(op, "y", outputs[i].y);
    } catch (const Error& e) {
      throw Error(std::string(e.what()) + " (output " + std::to_string(i) + ")");
    }
  }
  const cudaStream_t native = native_stream(op, stream);
  const float* x_data = floats_in(op, "x", x);
  std::array<MatmulTarget, kMaxGemvTargets> targets;
  for (std::size_t first = 0; first < outputs.size(); first += targets.size()) {
    const std::size_t count = std::min(targets.size(), outputs.size() - first);
    for (std::size_t i = 0; i < count; ++i) {
      const MatmulOutput& out = outputs[first + i];
      targets[i] = {own(op, *out.w).rows_view(), floats_out(op, "y", out.y)};
    }
    launch_matmul(native, std::span(targets).first(count), x_data, x.rows);
  }
}

void GpuCompute::embedding(Stream& stream, const Weights& table, const Tensor& ids,
                           const Tensor& out) {
  use_device(*device_);
  const GpuWeights& mine = own("embedding", table);
  check_embedding(table, ids, out);
  launch_embedding(native_stream("embedding", stream), mine.rows_view(),
                   ints_in("embedding", "ids", ids), ids.rows, floats_out("embedding", "out", out));
}

void GpuCompute::rms_norm(Stream& stream, const Tensor& x, const Tensor& weight, float eps,
                          const Tensor& out) {
  use_device(*device_);
  check_rms_norm(x, weight, out);
  launch_rms_norm(native_stream("rms_norm", stream), floats_in("rms_norm", "x", x),
                  floats_in("rms_norm", "weight", weight), x.rows, x.cols, eps,
                  floats_out("rms_norm", "out", out));
}

void GpuCompute::rope(Stream& stream, const Tensor& x, const Tensor& positions, int n_heads,
                      int head_dim, float base, RopeStyle style) {
  use_device(*device_);
  check_rope(x, positions, n_heads, head_dim, base);
  launch_rope(native_stream("rope", stream), floats_out("rope", "x", x),
              ints_in("rope", "positions", positions), x.rows, n_heads, head_dim, base, style);
}

void GpuCompute::silu_mul(Stream& stream, const Tensor& gate, const Tensor& up) {
  use_device(*device_);
  check_same_shape("silu_mul", "up", up, gate);
  launch_silu_mul(native_stream("silu_mul", stream), floats_out("silu_mul", "gate", gate),
                  floats_in("silu_mul", "up", up), gate.elements());
}

void GpuCompute::add(Stream& stream, const Tensor& x, const Tensor& y) {
  use_device(*device_);
  check_same_shape("add", "y", y, x);
  launch_add(native_stream("add", stream), floats_out("add", "x", x), floats_in("add", "y", y),
             x.elements());
}

void GpuCompute::layer_norm(Stream& stream, const Tensor& x, const Tensor& weight,
                            const Tensor& bias, float eps, const Tensor& out) {
  use_device(*device_);
  check_layer_norm(x, weight, bias, out);
  launch_layer_norm(native_stream("layer_norm", stream), floats_in("layer_norm", "x", x),
                    floats_in("layer_norm", "weight", weight),
                    floats_in("layer_norm", "bias", bias), x.rows, x.cols, eps,
                    floats_out("layer_norm", "out", out));
}

void GpuCompute::gelu(Stream& stream, const Tensor& x) {
  use_device(*device_);
  launch_gelu(native_stream("gelu", stream), floats_out("gelu", "x", x), x.elements());
}

void GpuCompute::add_bias(Stream& stream, const Tensor& x, const Tensor& bias) {
  use_device(*device_);
  check_add_bias(x, bias);
  launch_add_bias(native_stream("add_bias", stream), floats_out("add_bias", "x", x),
                  floats_in("add_bias", "bias", bias), x.rows, x.cols);
}

void GpuCompute::encoder_attention(Stream& stream, const Tensor& q, const Tensor& k,
                                   const Tensor& v, std::span<const std::int64_t> lengths,
                                   int n_heads, int head_dim, float scale, const Tensor& out) {
  use_device(*device_);
  check_encoder_attention(q, k, v, lengths, n_heads, head_dim, out);
  if (head_dim > kEncoderMaxHeadDim || n_heads > 65535) {
    throw Error("encoder_attention: the " + std::string(kBackendName) +
                " backend takes head_dim up to " + std::to_string(kEncoderMaxHeadDim) +
                " and up to 65535 heads, got head_dim " + std::to_string(head_dim) + ", " +
                std::to_string(n_heads) + " heads");
  }
  const cudaStream_t native = native_stream("encoder_attention", stream);
  const float* q_data = floats_in("encoder_attention", "q", q);
  const float* k_data = floats_in("encoder_attention", "k", k);
  const float* v_data = floats_in("encoder_attention", "v", v);
  float* out_data = floats_out("encoder_attention", "out", out);
  for_each_encoder_launch(lengths, [&](const EncoderLaunch& launch) {
    launch_encoder_attention(native, launch, q_data, k_data, v_data, n_heads, head_dim, scale,
                             out_data);
  });
}

}  // namespace cocktail::gpu
