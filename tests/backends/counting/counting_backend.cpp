#include "counting_backend.hpp"

#include <string>
#include <utility>
#include <vector>

#include "cocktail/error.hpp"
#include "cpu_backend.hpp"

namespace cocktail::testing {

namespace {

// Far below the CPU backend's 10: `backend = "auto"` must never pick a test backend.
constexpr int kCountingScore = 1;

template <class Mine, class Theirs>
Mine& own_object(const char* op, const char* what, Theirs& object) {
  auto* mine = dynamic_cast<Mine*>(&object);
  if (mine == nullptr) {
    throw Error(std::string(op) + ": " + what +
                " of another backend; the test-counting backend takes only its own");
  }
  return *mine;
}

class CountingCompute;

// A CPU upload of a matrix, tagged with the Compute that made it.
class CountingWeights final : public Weights {
 public:
  CountingWeights(std::unique_ptr<Weights> cpu, const CountingCompute* maker)
      : Weights(cpu->rows(), cpu->cols()), cpu_(std::move(cpu)), maker_(maker) {}
  const Weights& cpu() const { return *cpu_; }
  const CountingCompute* maker() const { return maker_; }

 private:
  std::unique_ptr<Weights> cpu_;
  const CountingCompute* maker_;
};

// Every op translates its stream, weights and tensors to the CPU's and runs the CPU's op.
class CountingCompute final : public Compute {
 public:
  explicit CountingCompute(std::shared_ptr<Compute> cpu) : cpu_(std::move(cpu)) {}

  std::string_view name() const override { return "test-counting"; }
  std::unique_ptr<Weights> upload(const WeightView& w) override {
    return std::make_unique<CountingWeights>(cpu_->upload(w), this);
  }

  void matmul(Stream& stream, const Weights& w, const Tensor& x, const Tensor& y) override {
    cpu_->matmul(cpu_stream("matmul", stream), cpu_weights("matmul", w),
                 cpu_tensor("matmul", "x", x), cpu_tensor("matmul", "y", y));
  }
  void matmul_shared_input(Stream& stream, const Tensor& x,
                           std::span<const MatmulOutput> outputs) override {
    const char* op = "matmul_shared_input";
    std::vector<MatmulOutput> cpu_outputs;
    for (const MatmulOutput& out : outputs) {
      cpu_outputs.push_back({&cpu_weights(op, *out.w), cpu_tensor(op, "y", out.y)});
    }
    cpu_->matmul_shared_input(cpu_stream(op, stream), cpu_tensor(op, "x", x), cpu_outputs);
  }
  void embedding(Stream& stream, const Weights& table, const Tensor& ids,
                 const Tensor& out) override {
    cpu_->embedding(cpu_stream("embedding", stream), cpu_weights("embedding", table),
                    cpu_tensor("embedding", "ids", ids), cpu_tensor("embedding", "out", out));
  }
  void rms_norm(Stream& stream, const Tensor& x, const Tensor& weight, float eps,
                const Tensor& out) override {
    cpu_->rms_norm(cpu_stream("rms_norm", stream), cpu_tensor("rms_norm", "x", x),
                   cpu_tensor("rms_norm", "weight", weight), eps,
                   cpu_tensor("rms_norm", "out", out));
  }
  void rope(Stream& stream, const Tensor& x, const Tensor& positions, int n_heads, int head_dim,
            float base, RopeStyle style) override {
    cpu_->rope(cpu_stream("rope", stream), cpu_tensor("rope", "x", x),
               cpu_tensor("rope", "positions", positions), n_heads, head_dim, base, style);
  }
  void silu_mul(Stream& stream, const Tensor& gate, const Tensor& up) override {
    cpu_->silu_mul(cpu_stream("silu_mul", stream), cpu_tensor("silu_mul", "gate", gate),
                   cpu_tensor("silu_mul", "up", up));
  }
  void add(Stream& stream, const Tensor& x, const Tensor& y) override {
    cpu_->add(cpu_stream("add", stream), cpu_tensor("add", "x", x), cpu_tensor("add", "y", y));
  }
  void layer_norm(Stream& stream, const Tensor& x, const Tensor& weight, const Tensor& bias,
                  float eps, const Tensor& out) override {
    cpu_->layer_norm(cpu_stream("layer_norm", stream), cpu_tensor("layer_norm", "x", x),
                     cpu_tensor("layer_norm", "weight", weight),
                     cpu_tensor("layer_norm", "bias", bias), eps,
                     cpu_tensor("layer_norm", "out", out));
  }
  void gelu(Stream& stream, const Tensor& x) override {
    cpu_->gelu(cpu_stream("gelu", stream), cpu_tensor("gelu", "x", x));
  }
  void add_bias(Stream& stream, const Tensor& x, const Tensor& bias) override {
    cpu_->add_bias(cpu_stream("add_bias", stream), cpu_tensor("add_bias", "x", x),
                   cpu_tensor("add_bias", "bias", bias));
  }
  void encoder_attention(Stream& stream, const Tensor& q, const Tensor& k, const Tensor& v,
                         std::span<const std::int64_t> lengths, int n_heads, int head_dim,
                         float scale, const Tensor& out) override {
    const char* op = "encoder_attention";
    cpu_->encoder_attention(cpu_stream(op, stream), cpu_tensor(op, "q", q), cpu_tensor(op, "k", k),
                            cpu_tensor(op, "v", v), lengths, n_heads, head_dim, scale,
                            cpu_tensor(op, "out", out));
  }

 private:
  // The CPU upload behind `w`; an Error naming `op` unless this Compute made it.
  const Weights& cpu_weights(const char* op, const Weights& w) const {
    const auto& mine = own_object<const CountingWeights>(op, "weights", w);
    if (mine.maker() != this) {
      throw Error(std::string(op) + ": weights uploaded by another Compute");
    }
    return mine.cpu();
  }

  std::shared_ptr<Compute> cpu_;
};

class CountingKvStore final : public KvStore {
 public:
  explicit CountingKvStore(std::shared_ptr<KvStore> cpu) : cpu_(std::move(cpu)) {}

  const KvStoreOptions& options() const override { return cpu_->options(); }
  void append(Stream& stream, int layer, const Tensor& k, const Tensor& v) override {
    const char* op = "KV store: append";
    cpu_->append(cpu_stream(op, stream), layer, cpu_tensor(op, "k", k), cpu_tensor(op, "v", v));
  }
  void commit(Stream& stream, const Plan& plan) override {
    cpu_->commit(cpu_stream("KV store: commit", stream), plan);
  }
  std::int64_t n_tokens() const override { return cpu_->n_tokens(); }
  std::int64_t n_committed() const override { return cpu_->n_committed(); }
  const Plan& plan() const override { return cpu_->plan(); }
  std::size_t bytes() const override { return cpu_->bytes(); }
  std::vector<SegmentInfo> segments() const override { return cpu_->segments(); }
  KvHeadSnapshot snapshot(int layer, int kv_head) const override {
    return cpu_->snapshot(layer, kv_head);
  }
  std::shared_ptr<KvStore> clone(const KvQuantLayout& layout) const override {
    return std::make_shared<CountingKvStore>(cpu_->clone(layout));
  }

  const KvStore& cpu() const { return *cpu_; }

 private:
  std::shared_ptr<KvStore> cpu_;
};

const KvStore& cpu_store(const char* op, const KvStore& store) {
  return own_object<const CountingKvStore>(op, "a KV store", store).cpu();
}

class CountingDecodePlan final : public DecodePlan {
 public:
  explicit CountingDecodePlan(std::unique_ptr<DecodePlan> cpu) : cpu_(std::move(cpu)) {}
  DecodePlan& cpu() const { return *cpu_; }

 private:
  std::unique_ptr<DecodePlan> cpu_;
};

class CountingAttention final : public AttentionExecutor {
 public:
  explicit CountingAttention(std::shared_ptr<AttentionExecutor> cpu) : cpu_(std::move(cpu)) {}

  std::unique_ptr<DecodePlan> plan_decode(const KvStore& store, int n_q_heads) override {
    return std::make_unique<CountingDecodePlan>(
        cpu_->plan_decode(cpu_store("plan_decode", store), n_q_heads));
  }
  void decode(Stream& stream, DecodePlan& plan, const KvStore& store, int layer, const Tensor& q,
              float softmax_scale, const Tensor& out) override {
    const char* op = "decode";
    cpu_->decode(cpu_stream(op, stream),
                 own_object<CountingDecodePlan>(op, "a decode plan", plan).cpu(),
                 cpu_store(op, store), layer, cpu_tensor(op, "q", q), softmax_scale,
                 cpu_tensor(op, "out", out));
  }
  void prefill(Stream& stream, const KvStore& store, int layer, const Tensor& q, int n_q_heads,
               float softmax_scale, const Tensor& out) override {
    const char* op = "prefill";
    cpu_->prefill(cpu_stream(op, stream), cpu_store(op, store), layer, cpu_tensor(op, "q", q),
                  n_q_heads, softmax_scale, cpu_tensor(op, "out", out));
  }
  void attention_mass(Stream& stream, const KvStore& store, int layer, const Tensor& q,
                      int n_q_heads, float softmax_scale, const Tensor& mass) override {
    const char* op = "attention_mass";
    cpu_->attention_mass(cpu_stream(op, stream), cpu_store(op, store), layer,
                         cpu_tensor(op, "q", q), n_q_heads, softmax_scale,
                         cpu_tensor(op, "mass", mass));
  }

 private:
  std::shared_ptr<AttentionExecutor> cpu_;
};

DeviceInfo counting_device(const DeviceInfo& cpu) {
  return {"test-counting: the CPU behind counted host-device copies (for tests only)",
          cpu.memory_bytes,
          {kCountingScore, "a test backend, never chosen by backend = \"auto\""}};
}

}  // namespace

std::ostream& operator<<(std::ostream& out, const Counts& counts) {
  return out << "{uploads " << counts.uploads << ", downloads " << counts.downloads << ", copies "
             << counts.copies << ", synchronizes " << counts.synchronizes << "}";
}

Counts CallCounter::snapshot() const {
  const auto read = [&](StreamCall call) {
    return calls_[std::size_t(call)].load(std::memory_order_relaxed);
  };
  return {read(StreamCall::upload), read(StreamCall::download), read(StreamCall::copy),
          read(StreamCall::synchronize)};
}

void CallCounter::reset() {
  for (std::atomic<std::int64_t>& calls : calls_) calls.store(0, std::memory_order_relaxed);
}

Tensor cpu_tensor(const char* op, const char* operand, const Tensor& t) {
  const auto* buffer = dynamic_cast<const CountingBuffer*>(t.buffer);
  if (buffer == nullptr) {
    throw Error(std::string(op) + ": " + operand + " (" + describe(t) + ") is " +
                (t.buffer ? "in another backend's memory" : "an empty view") +
                "; the test-counting backend reads only its own buffers");
  }
  Tensor cpu = t;
  cpu.buffer = &buffer->cpu();
  return cpu;
}

void CountingStream::upload(std::span<const std::byte> host, const Tensor& dst) {
  cpu_->upload(host, cpu_tensor("upload", "dst", dst));
  count(StreamCall::upload);
}

void CountingStream::download(const Tensor& src, std::span<std::byte> host) {
  cpu_->download(cpu_tensor("download", "src", src), host);
  count(StreamCall::download);
}

void CountingStream::copy(const Tensor& src, const Tensor& dst) {
  cpu_->copy(cpu_tensor("copy", "src", src), cpu_tensor("copy", "dst", dst));
  count(StreamCall::copy);
}

void CountingStream::synchronize() {
  cpu_->synchronize();
  count(StreamCall::synchronize);
}

void CountingStream::count(StreamCall call) {
  own_.add(call);
  backend_total_->add(call);
}

Stream& cpu_stream(const char* op, Stream& stream) {
  return own_object<CountingStream>(op, "a stream", stream).cpu();
}

CountingBackend::CountingBackend() : cpu_(std::make_shared<cpu::CpuBackend>()) {}

DeviceInfo CountingBackend::device() const {
  return counting_device(cpu_->device());
}

std::shared_ptr<Quantizer> CountingBackend::make_quantizer(const QuantSpec& spec) {
  return cpu_->make_quantizer(spec);  // host spans only: nothing to translate
}

std::shared_ptr<KvStore> CountingBackend::make_kv_store(const KvStoreOptions& options) {
  return std::make_shared<CountingKvStore>(cpu_->make_kv_store(options));
}

std::shared_ptr<AttentionExecutor> CountingBackend::make_attention() {
  return std::make_shared<CountingAttention>(cpu_->make_attention());
}

std::shared_ptr<Compute> CountingBackend::make_compute() {
  return std::make_shared<CountingCompute>(cpu_->make_compute());
}

std::shared_ptr<Buffer> CountingBackend::allocate(std::size_t bytes) {
  return std::make_shared<CountingBuffer>(cpu_->allocate(bytes));
}

std::shared_ptr<Stream> CountingBackend::make_stream() {
  return std::make_shared<CountingStream>(cpu_->make_stream(), total_);
}

std::shared_ptr<Buffer> CountingBackend::wrap_memory(void* /*memory*/, std::size_t bytes) {
  throw Error("test-counting: wrap_memory of " + std::to_string(bytes) +
              " bytes refused; its memory stays apart from the host's");
}

std::shared_ptr<Stream> CountingBackend::wrap_stream(void* native_stream) {
  if (native_stream != nullptr) throw Error("test-counting: wrap_stream takes null");
  return make_stream();
}

double CountingBackend::measure_read_bandwidth(std::size_t bytes) {
  return cpu_->measure_read_bandwidth(bytes);
}

CountingBackendProvider::CountingBackendProvider(Options& /*options*/) {}

Availability CountingBackendProvider::availability() const {
  return devices().front().availability;
}

std::vector<DeviceInfo> CountingBackendProvider::devices() const {
  return {counting_device(cpu::CpuBackend().device())};
}

std::shared_ptr<Backend> CountingBackendProvider::make_backend(int device) {
  if (device != 0) {
    throw Error("backend 'test-counting' has one device, 0; there is no device " +
                std::to_string(device));
  }
  return std::make_shared<CountingBackend>();
}

}  // namespace cocktail::testing
