#pragma once

#include <cstddef>
#include <memory>
#include <span>

#include "cocktail/tensor.hpp"

namespace cocktail {

// A marker for timing, made once (Stream::make_event) and recorded at a point of a stream's queue
// as often as needed (Stream::record), so that timing every step allocates nothing.
class Event {
 public:
  virtual ~Event() = default;
};

// An ordered queue of work on one device (Backend::make_stream). Every call that takes a
// stream enqueues its work there and may return before it is done; work on one stream runs in
// the order it was enqueued. Copies between host and device are the explicit calls below.
// One stream serves one thread at a time.
class Stream {
 public:
  virtual ~Stream() = default;

  // Enqueues a copy of `host` into `dst` (exactly dst.bytes() bytes). `host` must stay valid
  // and unchanged until synchronize() returns.
  virtual void upload(std::span<const std::byte> host, const Tensor& dst) = 0;
  // Enqueues a copy of `src` into `host` (exactly src.bytes() bytes); the bytes are there once
  // synchronize() returns.
  virtual void download(const Tensor& src, std::span<std::byte> host) = 0;
  // Enqueues a copy between two tensors of this device of the same type and shape.
  virtual void copy(const Tensor& src, const Tensor& dst) = 0;
  // Waits until every piece of work enqueued so far is done.
  virtual void synchronize() = 0;

  // A new event, not yet recorded; any stream of the same backend may record it.
  virtual std::shared_ptr<Event> make_event() = 0;
  // Marks this point of the queue with `event`: it is reached when the work enqueued before it
  // is done. Recording it again moves the mark.
  virtual void record(Event& event) = 0;
  // Seconds between two recorded events, both reached (after synchronize()).
  virtual double seconds_between(const Event& start, const Event& end) const = 0;
};

// Typed forms of the copies: an Error unless the tensor holds T's element type.
template <class T>
void upload(Stream& stream, std::span<const T> host, const Tensor& dst) {
  expect_tensor("upload", "dst", dst, element_type_of<T>(), dst.rows, dst.cols);
  stream.upload(std::as_bytes(host), dst);
}

template <class T>
void download(Stream& stream, const Tensor& src, std::span<T> host) {
  expect_tensor("download", "src", src, element_type_of<T>(), src.rows, src.cols);
  stream.download(src, std::as_writable_bytes(host));
}

}  // namespace cocktail
