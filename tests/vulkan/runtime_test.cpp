// The Vulkan runtime under the Stream and Buffer interfaces: staging copies, tensors at any
// element offset of a buffer larger than one binding, events, the index report, validation
// messages, descriptor pools, and the errors of what the backend does not do.

#include <gtest/gtest.h>

#include <cstdlib>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "cocktail/error.hpp"
#include "compute/kernels.hpp"
#include "support/error_of.hpp"
#include "support/random_kv.hpp"
#include "vulkan_fixture.hpp"

namespace cocktail::vulkan::testing {
namespace {

using cocktail::testing::error_of;
using cocktail::testing::random_floats;

TEST_F(VulkanTest, RunsOnAVulkan11DeviceWithAComputeQueue) {
  EXPECT_GT(backend().device().availability.score, 0);
  EXPECT_GT(device().limits().max_storage_range, 0u);
  EXPECT_GT(device().limits().timestamp_bits, 0u);
}

TEST_F(VulkanTest, CopiesGoThroughStagingAndDownloadsLandAtSynchronize) {
  std::mt19937 rng(1);
  const std::vector<float> x = random_floats(300, rng);
  const DeviceRows a = device_rows(backend(), x.size(), 3, 100, "a");
  const DeviceRows b = device_rows(backend(), x.size(), 3, 100, "b");
  upload(stream(), std::span<const float>(x), a.tensor);
  stream().copy(a.tensor, b.tensor);
  std::vector<float> back(x.size(), -1.0f);
  download(stream(), b.tensor, std::span<float>(back));
  EXPECT_EQ(back, std::vector<float>(x.size(), -1.0f)) << "the bytes land at synchronize()";
  stream().synchronize();
  EXPECT_EQ(back, x);
}

TEST_F(VulkanTest, OverlappingCopyIsRefused) {
  const DeviceRows a = device_rows(backend(), 40, 4, 10, "a");
  const std::string message =
      error_of<Error>([&] { stream().copy(a.tensor.row_range(0, 2), a.tensor.row_range(1, 2)); });
  EXPECT_NE(message.find("overlap"), std::string::npos) << message;
}

// Views at element offsets that are not multiples of minStorageBufferOffsetAlignment bind from
// the aligned byte before them, and the kernel starts at their first element.
TEST_F(VulkanTest, KernelsReadViewsAtAnyElementOffset) {
  std::mt19937 rng(2);
  const std::int64_t rows = 9, cols = 7;  // rows of 28 bytes
  const std::vector<float> x = random_floats(std::size_t(rows * cols), rng);
  const std::vector<float> y = random_floats(x.size(), rng);
  const DeviceRows xd = to_device(x, rows, cols);
  const DeviceRows yd = to_device(y, rows, cols);
  const std::shared_ptr<Compute> compute = backend().make_compute();
  compute->add(stream(), xd.tensor.row_range(1, 3), yd.tensor.row_range(5, 3));
  const std::vector<float> sum = read_back(xd.tensor);
  for (std::int64_t i = 0; i < rows * cols; ++i) {
    const std::int64_t row = i / cols;
    const float want =
        row >= 1 && row < 4 ? x[std::size_t(i)] + y[std::size_t(i + 4 * cols)] : x[std::size_t(i)];
    ASSERT_EQ(sum[std::size_t(i)], want) << "element " << i;
  }
}

// A buffer larger than one storage binding serves every tensor that fits one; a tensor that
// does not is an Error naming the limit.
TEST_F(VulkanTest, BuffersLargerThanOneBindingServeTensorsThatFitOne) {
  const VkDeviceSize range = device().limits().max_storage_range;
  if (range > (VkDeviceSize(256) << 20))
    GTEST_SKIP() << "bindings here cover " << range << " bytes";
  const std::shared_ptr<Buffer> big = backend().allocate(range + (VkDeviceSize(32) << 20));
  const std::int64_t cols = 1000;
  const std::size_t late = (range + (VkDeviceSize(16) << 20)) / 4 * 4;  // past the first range
  const Tensor x{big.get(), late, ElementType::f32, 3, cols};
  std::mt19937 rng(3);
  const std::vector<float> values = random_floats(std::size_t(3 * cols), rng);
  upload(stream(), std::span<const float>(values), x);
  const std::shared_ptr<Compute> compute = backend().make_compute();
  compute->add(stream(), x, x);
  const std::vector<float> doubled = read_back(x);
  for (std::size_t i = 0; i < values.size(); ++i) ASSERT_EQ(doubled[i], 2 * values[i]);

  const Tensor whole{big.get(), 0, ElementType::f32, std::int64_t(range / 4 / cols) + 1, cols};
  const std::string message = error_of<Error>([&] { compute->gelu(stream(), whole); });
  EXPECT_NE(message.find("maxStorageBufferRange"), std::string::npos) << message;
  EXPECT_NE(message.find("gelu: x"), std::string::npos) << message;
}

TEST_F(VulkanTest, EventsTimeTheWorkBetweenThemOnceReached) {
  const std::shared_ptr<Event> start = stream().make_event();
  const std::shared_ptr<Event> end = stream().make_event();
  const DeviceRows x = device_rows(backend(), 1 << 16, 64, 1024, "x");
  stream().record(*start);
  backend().make_compute()->gelu(stream(), x.tensor);
  stream().record(*end);
  const std::string early = error_of<Error>([&] { stream().seconds_between(*start, *end); });
  EXPECT_NE(early.find("not reached"), std::string::npos) << early;
  stream().synchronize();
  const double seconds = stream().seconds_between(*start, *end);
  EXPECT_GE(seconds, 0.0);
  EXPECT_LT(seconds, 10.0);
}

TEST_F(VulkanTest, AnIdOutsideTheTableFailsTheSynchronize) {
  const std::vector<float> table(4 * 8, 0.5f);
  const std::shared_ptr<Compute> compute = backend().make_compute();
  const std::unique_ptr<Weights> w =
      compute->upload({TensorType::f32, reinterpret_cast<const std::byte*>(table.data()), 4, 8});
  const std::vector<std::int32_t> ids = {1, 3, 4, 0};
  DeviceRows ids_device;
  const TensorRequest request{&ids_device.tensor, ElementType::i32, 4, 1};
  ids_device.memory = allocate_tensors(backend(), std::span(&request, 1));
  upload(stream(), std::span<const std::int32_t>(ids), ids_device.tensor);
  const DeviceRows out = device_rows(backend(), 4 * 8, 4, 8, "out");
  compute->embedding(stream(), *w, ids_device.tensor, out.tensor);
  const std::string message = error_of<Error>([&] { stream().synchronize(); });
  EXPECT_EQ(message, "embedding: id 4 at position 2 is outside [0, 4)");
  stream().synchronize();  // the report was cleared
}

// With COCKTAIL_VULKAN_VALIDATION=1 (as ctest runs this test), a call the validation layer
// finds wrong fails the stream's next synchronize, naming the layer's message.
TEST_F(VulkanTest, ValidationMessagesFailTheOperation) {
  if (!device().instance().validation()) GTEST_SKIP() << "COCKTAIL_VULKAN_VALIDATION is not 1";
  const DeviceRows x = device_rows(backend(), 64, 1, 64, "x");
  const KernelOperand operand = kernel_operand("test", "x", x.tensor, device());
  // A binding that does not start on minStorageBufferOffsetAlignment.
  const BufferRange misaligned{operand.binding.buffer, operand.binding.offset + 4, 64};
  const GeluPush push{1, 0};
  stream().dispatch(kGelu, std::span(&misaligned, 1), std::as_bytes(std::span(&push, 1)), {1, 1});
  const std::string message = error_of<Error>([&] { stream().synchronize(); });
  EXPECT_NE(message.find("validation layer reported"), std::string::npos) << message;
  EXPECT_NE(message.find("minStorageBufferOffsetAlignment"), std::string::npos) << message;
}

TEST_F(VulkanTest, WrappingAHostsMemoryOrQueueSaysWhatToDoInstead) {
  float memory[4] = {};
  const std::string buffer = error_of<Error>([&] { backend().wrap_memory(memory, sizeof memory); });
  EXPECT_NE(buffer.find("Backend::allocate"), std::string::npos) << buffer;
  const std::string queue = error_of<Error>([&] { backend().wrap_stream(nullptr); });
  EXPECT_NE(queue.find("Backend::make_stream"), std::string::npos) << queue;
}

TEST_F(VulkanTest, MeasuresReadBandwidthAcrossBindings) {
  const VkDeviceSize range = device().limits().max_storage_range;
  const std::size_t bytes = range <= (VkDeviceSize(256) << 20) ? range + (1 << 20) : 1 << 20;
  EXPECT_GT(backend().measure_read_bandwidth(bytes), 0.0);
}

class VulkanPoolTest : public VulkanTest {
 protected:
  void SetUp() override { SetUpWith(false); }
};

// Without push descriptors, sets come from descriptor pools, more than one in a long batch.
TEST_F(VulkanPoolTest, DescriptorPoolsServeALongBatch) {
  EXPECT_FALSE(device().push_descriptors());
  std::mt19937 rng(4);
  const std::vector<float> x = random_floats(96, rng);
  const std::vector<float> y = random_floats(96, rng);
  const DeviceRows xd = to_device(x, 1, 96);
  const DeviceRows yd = to_device(y, 1, 96);
  const std::shared_ptr<Compute> compute = backend().make_compute();
  const int calls = 600;  // more sets than one pool holds
  for (int i = 0; i < calls; ++i) compute->add(stream(), xd.tensor, yd.tensor);
  const std::vector<float> sum = read_back(xd.tensor);
  for (std::size_t i = 0; i < x.size(); ++i) {
    float want = x[i];
    for (int c = 0; c < calls; ++c) want += y[i];
    ASSERT_EQ(sum[i], want) << "element " << i;
  }
}

}  // namespace
}  // namespace cocktail::vulkan::testing
