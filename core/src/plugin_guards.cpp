#include "plugin_guards.hpp"

#include <exception>
#include <mutex>
#include <new>
#include <utility>

#include "cocktail/error.hpp"

namespace cocktail {

namespace {

// Runs `call` (a call into plugin code) and rethrows anything it throws as an error owned by
// the core library, with the message copied while the plugin is still loaded. A config
// mistake stays a ConfigError with its message unchanged: it already names file, line and key.
template <class Call>
decltype(auto) call_plugin(const PluginLabel& label, Call&& call) {
  try {
    return std::forward<Call>(call)();
  } catch (const ConfigError& e) {
    throw ConfigError(e.what());
  } catch (const PluginError& e) {
    throw PluginError(label.text + ": " + e.what());
  } catch (const std::bad_alloc&) {
    throw Error(label.text + ": out of memory");
  } catch (const std::exception& e) {
    throw Error(label.text + ": " + e.what());
  } catch (...) {
    throw Error(label.text + ": threw something that is not a std::exception");
  }
}

// The wrapped object, who it is, and what must outlive it: for an object a backend made, the
// plugin's backend, whose library holds the object's code (declared first, so released last).
template <class Interface>
class Guard {
 public:
  Guard(std::shared_ptr<Interface> inner, PluginLabel label,
        std::shared_ptr<const void> owner = nullptr)
      : owner_(std::move(owner)), inner_(std::move(inner)), label_(std::move(label)) {}

 protected:
  template <class Call>
  decltype(auto) call(Call&& c) const {
    return call_plugin(label_, std::forward<Call>(c));
  }

  std::shared_ptr<const void> owner_;
  std::shared_ptr<Interface> inner_;
  PluginLabel label_;
};

// An object the plugin made, handed out as it is (its own backend's code must recognise it:
// a Buffer inside a Tensor, an Event), kept from outliving the plugin's library.
template <class T>
std::shared_ptr<T> keeping_owner(std::shared_ptr<T> object, std::shared_ptr<const void> owner) {
  struct Holder {
    std::shared_ptr<const void> owner;  // declared first, so released after the object
    std::shared_ptr<T> object;
  };
  T* raw = object.get();
  return std::shared_ptr<T>(std::make_shared<Holder>(Holder{std::move(owner), std::move(object)}),
                            raw);
}

class GuardedStream final : public Stream, Guard<Stream> {
 public:
  using Guard::Guard;

  // The plugin's own stream, for its own objects, which enqueue on it directly.
  Stream& inner() const { return *inner_; }

  void upload(std::span<const std::byte> host, const Tensor& dst) override {
    call([&] { inner_->upload(host, dst); });
  }
  void download(const Tensor& src, std::span<std::byte> host) override {
    call([&] { inner_->download(src, host); });
  }
  void copy(const Tensor& src, const Tensor& dst) override {
    call([&] { inner_->copy(src, dst); });
  }
  void synchronize() override {
    call([&] { inner_->synchronize(); });
  }
  std::shared_ptr<Event> make_event() override {
    return keeping_owner(call([&] { return inner_->make_event(); }), owner_);
  }
  void record(Event& event) override {
    call([&] { inner_->record(event); });
  }
  double seconds_between(const Event& start, const Event& end) const override {
    return call([&] { return inner_->seconds_between(start, end); });
  }
};

// A stream the plugin made reaches it unwrapped; any other is passed as it is.
Stream& unguarded(Stream& stream) {
  auto* guarded = dynamic_cast<GuardedStream*>(&stream);
  return guarded ? guarded->inner() : stream;
}

class GuardedQuantizer final : public Quantizer, Guard<Quantizer> {
 public:
  using Guard::Guard;
  const QuantSpec& spec() const override {
    return call([&]() -> const QuantSpec& { return inner_->spec(); });
  }
  std::size_t packed_bytes(const BlockShape& shape) const override {
    return call([&] { return inner_->packed_bytes(shape); });
  }
  void pack(std::span<const float> values, const BlockShape& shape,
            std::span<std::byte> packed) const override {
    call([&] { inner_->pack(values, shape, packed); });
  }
  void unpack(std::span<const std::byte> packed, const BlockShape& shape,
              std::span<float> values) const override {
    call([&] { inner_->unpack(packed, shape, values); });
  }
};

class GuardedKvStore final : public KvStore, Guard<KvStore> {
 public:
  using Guard::Guard;

  // The plugin's own store, for its own attention executor, which reads it directly.
  const KvStore& inner() const { return *inner_; }

  const KvStoreOptions& options() const override {
    return call([&]() -> const KvStoreOptions& { return inner_->options(); });
  }
  void append(Stream& stream, int layer, const Tensor& k, const Tensor& v) override {
    call([&] { inner_->append(unguarded(stream), layer, k, v); });
  }
  void commit(Stream& stream, const Plan& plan) override {
    call([&] { inner_->commit(unguarded(stream), plan); });
  }
  std::int64_t n_tokens() const override {
    return call([&] { return inner_->n_tokens(); });
  }
  std::int64_t n_committed() const override {
    return call([&] { return inner_->n_committed(); });
  }
  const Plan& plan() const override {
    return call([&]() -> const Plan& { return inner_->plan(); });
  }
  std::size_t bytes() const override {
    return call([&] { return inner_->bytes(); });
  }
  std::vector<SegmentInfo> segments() const override {
    return call([&] { return inner_->segments(); });
  }
  KvHeadSnapshot snapshot(int layer, int kv_head) const override {
    return call([&] { return inner_->snapshot(layer, kv_head); });
  }
  std::shared_ptr<KvStore> clone(const KvQuantLayout& layout) const override {
    std::shared_ptr<KvStore> copy = call([&] { return inner_->clone(layout); });
    return std::make_shared<GuardedKvStore>(std::move(copy), label_, owner_);
  }
};

// A store made by the same plugin reaches it unwrapped; any other store is passed as it is
// (the plugin decides whether it can read it).
const KvStore& unguarded(const KvStore& store) {
  const auto* guarded = dynamic_cast<const GuardedKvStore*>(&store);
  return guarded ? guarded->inner() : store;
}

class GuardedAttention final : public AttentionExecutor, Guard<AttentionExecutor> {
 public:
  using Guard::Guard;
  std::unique_ptr<DecodePlan> plan_decode(const KvStore& store, int n_q_heads) override {
    return call([&] { return inner_->plan_decode(unguarded(store), n_q_heads); });
  }
  void decode(Stream& stream, DecodePlan& plan, const KvStore& store, int layer, const Tensor& q,
              float softmax_scale, const Tensor& out) override {
    call([&] {
      inner_->decode(unguarded(stream), plan, unguarded(store), layer, q, softmax_scale, out);
    });
  }
  void prefill(Stream& stream, const KvStore& store, int layer, const Tensor& q, int n_q_heads,
               float softmax_scale, const Tensor& out) override {
    call([&] {
      inner_->prefill(unguarded(stream), unguarded(store), layer, q, n_q_heads, softmax_scale, out);
    });
  }
  void attention_mass(Stream& stream, const KvStore& store, int layer, const Tensor& q,
                      int n_q_heads, float softmax_scale, const Tensor& mass) override {
    call([&] {
      inner_->attention_mass(unguarded(stream), unguarded(store), layer, q, n_q_heads,
                             softmax_scale, mass);
    });
  }
};

class GuardedCompute final : public Compute, Guard<Compute> {
 public:
  using Guard::Guard;
  std::string_view name() const override {
    return call([&] { return inner_->name(); });
  }
  std::unique_ptr<Weights> upload(const WeightView& w) override {
    return call([&] { return inner_->upload(w); });
  }
  void matmul(Stream& stream, const Weights& w, const Tensor& x, const Tensor& y) override {
    call([&] { inner_->matmul(unguarded(stream), w, x, y); });
  }
  void matmul_shared_input(Stream& stream, const Tensor& x,
                           std::span<const MatmulOutput> outputs) override {
    call([&] { inner_->matmul_shared_input(unguarded(stream), x, outputs); });
  }
  void embedding(Stream& stream, const Weights& table, const Tensor& ids,
                 const Tensor& out) override {
    call([&] { inner_->embedding(unguarded(stream), table, ids, out); });
  }
  void rms_norm(Stream& stream, const Tensor& x, const Tensor& weight, float eps,
                const Tensor& out) override {
    call([&] { inner_->rms_norm(unguarded(stream), x, weight, eps, out); });
  }
  void rope(Stream& stream, const Tensor& x, const Tensor& positions, int n_heads, int head_dim,
            float base, RopeStyle style) override {
    call([&] { inner_->rope(unguarded(stream), x, positions, n_heads, head_dim, base, style); });
  }
  void silu_mul(Stream& stream, const Tensor& gate, const Tensor& up) override {
    call([&] { inner_->silu_mul(unguarded(stream), gate, up); });
  }
  void add(Stream& stream, const Tensor& x, const Tensor& y) override {
    call([&] { inner_->add(unguarded(stream), x, y); });
  }
  void layer_norm(Stream& stream, const Tensor& x, const Tensor& weight, const Tensor& bias,
                  float eps, const Tensor& out) override {
    call([&] { inner_->layer_norm(unguarded(stream), x, weight, bias, eps, out); });
  }
  void gelu(Stream& stream, const Tensor& x) override {
    call([&] { inner_->gelu(unguarded(stream), x); });
  }
  void add_bias(Stream& stream, const Tensor& x, const Tensor& bias) override {
    call([&] { inner_->add_bias(unguarded(stream), x, bias); });
  }
  void encoder_attention(Stream& stream, const Tensor& q, const Tensor& k, const Tensor& v,
                         std::span<const std::int64_t> lengths, int n_heads, int head_dim,
                         float scale, const Tensor& out) override {
    call([&] {
      inner_->encoder_attention(unguarded(stream), q, k, v, lengths, n_heads, head_dim, scale, out);
    });
  }
};

// A backend the provider made: the provider (and so the library) is its owner, and every object
// it makes keeps both the backend and the provider alive.
class GuardedBackend final : public Backend, Guard<Backend> {
 public:
  using Guard::Guard;

  std::string_view name() const override {
    return call([&] { return inner_->name(); });
  }
  DeviceInfo device() const override {
    return call([&] { return inner_->device(); });
  }
  std::shared_ptr<Quantizer> make_quantizer(const QuantSpec& spec) override {
    return made<GuardedQuantizer>([&] { return inner_->make_quantizer(spec); });
  }
  std::shared_ptr<KvStore> make_kv_store(const KvStoreOptions& options) override {
    return made<GuardedKvStore>([&] { return inner_->make_kv_store(options); });
  }
  std::shared_ptr<AttentionExecutor> make_attention() override {
    return made<GuardedAttention>([&] { return inner_->make_attention(); });
  }
  std::shared_ptr<Compute> make_compute() override {
    return made<GuardedCompute>([&] { return inner_->make_compute(); });
  }
  std::shared_ptr<Buffer> allocate(std::size_t bytes) override {
    std::shared_ptr<Buffer> buffer = call([&] { return inner_->allocate(bytes); });
    if (!buffer) throw Error(label_.text + ": allocated no buffer");
    return keeping_owner(std::move(buffer), keeping_owner(inner_, owner_));
  }
  std::shared_ptr<Stream> make_stream() override {
    return made<GuardedStream>([&] { return inner_->make_stream(); });
  }
  std::shared_ptr<Buffer> wrap_memory(void* memory, std::size_t bytes) override {
    std::shared_ptr<Buffer> buffer = call([&] { return inner_->wrap_memory(memory, bytes); });
    if (!buffer) throw Error(label_.text + ": wrapped no buffer");
    return keeping_owner(std::move(buffer), keeping_owner(inner_, owner_));
  }
  std::shared_ptr<Stream> wrap_stream(void* native_stream) override {
    return made<GuardedStream>([&] { return inner_->wrap_stream(native_stream); });
  }
  double measure_read_bandwidth(std::size_t bytes) override {
    return call([&] { return inner_->measure_read_bandwidth(bytes); });
  }

 private:
  template <class Guarded, class Make>
  std::shared_ptr<Guarded> made(Make&& make) {
    auto object = call(std::forward<Make>(make));
    if (!object) throw Error(label_.text + ": made no object");
    return std::make_shared<Guarded>(std::move(object), label_, keeping_owner(inner_, owner_));
  }
};

class GuardedBackendProvider final : public BackendProvider, Guard<BackendProvider> {
 public:
  using Guard::Guard;

  std::string_view name() const override {
    return call([&] { return inner_->name(); });
  }
  Availability availability() const override {
    return call([&] { return inner_->availability(); });
  }
  std::vector<DeviceInfo> devices() const override {
    return call([&] { return inner_->devices(); });
  }
  std::shared_ptr<Backend> make_backend(int device) override {
    std::shared_ptr<Backend> backend = call([&] { return inner_->make_backend(device); });
    if (!backend) throw Error(label_.text + ": made no backend");
    return std::make_shared<GuardedBackend>(std::move(backend), label_, inner_);
  }
};

class GuardedPlanner final : public ChunkPlanner, Guard<ChunkPlanner> {
 public:
  using Guard::Guard;

  std::string_view name() const override {
    return call([&] { return inner_->name(); });
  }
  Plan plan(const PlanInput& input) override {
    const std::lock_guard lock(mutex_);
    return call([&] { return inner_->plan(input); });
  }
  bool replans_during_decode() const override {
    return call([&] { return inner_->replans_during_decode(); });
  }

 private:
  std::mutex mutex_;
};

class GuardedScorer final : public ChunkScorer, Guard<ChunkScorer> {
 public:
  using Guard::Guard;

  std::string_view name() const override {
    return call([&] { return inner_->name(); });
  }
  std::vector<double> score(const ScoringInput& input) override {
    const std::lock_guard lock(mutex_);
    return call([&] { return inner_->score(input); });
  }
  void use_backend(std::shared_ptr<Backend> backend) override {
    const std::lock_guard lock(mutex_);
    call([&] { inner_->use_backend(std::move(backend)); });
  }
  std::vector<int> query_attention_layers(int n_layers) const override {
    return call([&] { return inner_->query_attention_layers(n_layers); });
  }

 private:
  std::mutex mutex_;
};

}  // namespace

std::shared_ptr<BackendProvider> guard_backend_provider(std::shared_ptr<BackendProvider> provider,
                                                        PluginLabel label) {
  return std::make_shared<GuardedBackendProvider>(std::move(provider), std::move(label));
}

std::shared_ptr<ChunkPlanner> guard_planner(std::shared_ptr<ChunkPlanner> planner,
                                            PluginLabel label) {
  return std::make_shared<GuardedPlanner>(std::move(planner), std::move(label));
}

std::shared_ptr<ChunkScorer> guard_scorer(std::shared_ptr<ChunkScorer> scorer, PluginLabel label) {
  return std::make_shared<GuardedScorer>(std::move(scorer), std::move(label));
}

}  // namespace cocktail
