// A backend provider and backend whose every method throws, except the factories, which make
// objects whose every method throws. Two methods throw what a careless plugin might: std::bad_alloc
// and a value that is no std::exception at all.
#include <new>

#include "cocktail/plugin.hpp"
#include "throws_everywhere.hpp"

namespace {

using cocktail_test::throw_from;

class ThrowingQuantizer : public cocktail::Quantizer {
 public:
  const cocktail::QuantSpec& spec() const override { throw_from("Quantizer::spec"); }
  std::size_t packed_bytes(const cocktail::BlockShape&) const override {
    throw_from("Quantizer::packed_bytes");
  }
  void pack(std::span<const float>, const cocktail::BlockShape&,
            std::span<std::byte>) const override {
    throw_from("Quantizer::pack");
  }
  void unpack(std::span<const std::byte>, const cocktail::BlockShape&,
              std::span<float>) const override {
    throw_from("Quantizer::unpack");
  }
};

class ThrowingKvStore : public cocktail::KvStore {
 public:
  const cocktail::KvStoreOptions& options() const override { throw_from("KvStore::options"); }
  void append(cocktail::Stream&, int, const cocktail::Tensor&, const cocktail::Tensor&) override {
    throw_from("KvStore::append");
  }
  void commit(cocktail::Stream&, const cocktail::Plan&) override { throw_from("KvStore::commit"); }
  std::int64_t n_tokens() const override { throw_from("KvStore::n_tokens"); }
  std::int64_t n_committed() const override { throw_from("KvStore::n_committed"); }
  const cocktail::Plan& plan() const override { throw_from("KvStore::plan"); }
  std::size_t bytes() const override { throw_from("KvStore::bytes"); }
  std::vector<cocktail::SegmentInfo> segments() const override { throw_from("KvStore::segments"); }
  cocktail::KvHeadSnapshot snapshot(int, int) const override { throw_from("KvStore::snapshot"); }
  std::shared_ptr<cocktail::KvStore> clone(const cocktail::KvQuantLayout&) const override {
    throw_from("KvStore::clone");
  }
};

class ThrowingAttention : public cocktail::AttentionExecutor {
 public:
  using Stream = cocktail::Stream;
  using Tensor = cocktail::Tensor;
  std::unique_ptr<cocktail::DecodePlan> plan_decode(const cocktail::KvStore&, int) override {
    throw_from("AttentionExecutor::plan_decode");
  }
  void decode(Stream&, cocktail::DecodePlan&, const cocktail::KvStore&, int, const Tensor&, float,
              const Tensor&) override {
    throw_from("AttentionExecutor::decode");
  }
  void prefill(Stream&, const cocktail::KvStore&, int, const Tensor&, int, float,
               const Tensor&) override {
    throw_from("AttentionExecutor::prefill");
  }
  void attention_mass(Stream&, const cocktail::KvStore&, int, const Tensor&, int, float,
                      const Tensor&) override {
    throw_from("AttentionExecutor::attention_mass");
  }
};

class ThrowingStream : public cocktail::Stream {
 public:
  void upload(std::span<const std::byte>, const cocktail::Tensor&) override {
    throw_from("Stream::upload");
  }
  void download(const cocktail::Tensor&, std::span<std::byte>) override {
    throw_from("Stream::download");
  }
  void copy(const cocktail::Tensor&, const cocktail::Tensor&) override {
    throw_from("Stream::copy");
  }
  void synchronize() override { throw_from("Stream::synchronize"); }
  std::shared_ptr<cocktail::Event> make_event() override { throw_from("Stream::make_event"); }
  void record(cocktail::Event&) override { throw_from("Stream::record"); }
  double seconds_between(const cocktail::Event&, const cocktail::Event&) const override {
    throw_from("Stream::seconds_between");
  }
};

class ThrowingCompute : public cocktail::Compute {
 public:
  using Stream = cocktail::Stream;
  using Tensor = cocktail::Tensor;
  std::string_view name() const override { throw_from("Compute::name"); }
  std::unique_ptr<cocktail::Weights> upload(const cocktail::WeightView&) override {
    throw_from("Compute::upload");
  }
  void matmul(Stream&, const cocktail::Weights&, const Tensor&, const Tensor&) override {
    throw_from("Compute::matmul");
  }
  void matmul_shared_input(Stream&, const Tensor&,
                           std::span<const cocktail::MatmulOutput>) override {
    throw_from("Compute::matmul_shared_input");
  }
  void embedding(Stream&, const cocktail::Weights&, const Tensor&, const Tensor&) override {
    throw_from("Compute::embedding");
  }
  void rms_norm(Stream&, const Tensor&, const Tensor&, float, const Tensor&) override {
    throw_from("Compute::rms_norm");
  }
  void rope(Stream&, const Tensor&, const Tensor&, int, int, float, cocktail::RopeStyle) override {
    throw_from("Compute::rope");
  }
  void silu_mul(Stream&, const Tensor&, const Tensor&) override { throw_from("Compute::silu_mul"); }
  void add(Stream&, const Tensor&, const Tensor&) override { throw_from("Compute::add"); }
  void layer_norm(Stream&, const Tensor&, const Tensor&, const Tensor&, float,
                  const Tensor&) override {
    throw_from("Compute::layer_norm");
  }
  void gelu(Stream&, const Tensor&) override { throw_from("Compute::gelu"); }
  void add_bias(Stream&, const Tensor&, const Tensor&) override { throw_from("Compute::add_bias"); }
  void encoder_attention(Stream&, const Tensor&, const Tensor&, const Tensor&,
                         std::span<const std::int64_t>, int, int, float, const Tensor&) override {
    throw_from("Compute::encoder_attention");
  }
};

class ThrowingBackend : public cocktail::Backend {
 public:
  std::string_view name() const override { throw_from("Backend::name"); }
  cocktail::DeviceInfo device() const override { throw_from("Backend::device"); }
  std::shared_ptr<cocktail::Quantizer> make_quantizer(const cocktail::QuantSpec&) override {
    return std::make_shared<ThrowingQuantizer>();
  }
  std::shared_ptr<cocktail::KvStore> make_kv_store(const cocktail::KvStoreOptions&) override {
    return std::make_shared<ThrowingKvStore>();
  }
  std::shared_ptr<cocktail::AttentionExecutor> make_attention() override {
    return std::make_shared<ThrowingAttention>();
  }
  std::shared_ptr<cocktail::Compute> make_compute() override {
    return std::make_shared<ThrowingCompute>();
  }
  std::shared_ptr<cocktail::Buffer> allocate(std::size_t) override {
    throw_from("Backend::allocate");
  }
  std::shared_ptr<cocktail::Stream> make_stream() override {
    return std::make_shared<ThrowingStream>();
  }
  std::shared_ptr<cocktail::Buffer> wrap_memory(void*, std::size_t) override {
    throw_from("Backend::wrap_memory");
  }
  std::shared_ptr<cocktail::Stream> wrap_stream(void*) override {
    throw_from("Backend::wrap_stream");
  }
  double measure_read_bandwidth(std::size_t) override { throw std::bad_alloc(); }
};

class ThrowingProvider : public cocktail::BackendProvider {
 public:
  explicit ThrowingProvider(cocktail::Options&) {}
  std::string_view name() const override { throw_from("BackendProvider::name"); }
  cocktail::Availability availability() const override {
    throw_from("BackendProvider::availability");
  }
  std::vector<cocktail::DeviceInfo> devices() const override {
    throw 42;  // not a std::exception
  }
  std::shared_ptr<cocktail::Backend> make_backend(int) override {
    return std::make_shared<ThrowingBackend>();
  }
};

}  // namespace

COCKTAIL_BACKEND_PLUGIN("test-throws", "0.0.1", "test backend: every method throws",
                        ThrowingProvider)
